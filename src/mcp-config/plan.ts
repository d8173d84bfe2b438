// Turns "this server should now read command C, args A" into the smallest splices: the command's
// value replaced, and in args only the elements before the part they have in common. Wrapping
// inserts a prefix, undoing deletes that same prefix, re-pointing replaces one element, so a
// wrap followed by an undo gives the file back byte for byte.
import type { Edit, ParsedConfig, ServerSite } from './model.js';
import { innerOf, type Invocation, type Item, type Launcher, wrapped, wrappingOf } from './wrap.js';

function itemText(item: Item, config: ParsedConfig): string {
  return item.raw ?? config.quote(item.value);
}

/** The separator the array already uses between elements (one per line, say), else ", ". */
function separatorOf(text: string, site: ServerSite): string {
  const items = site.args?.items ?? [];
  if (items.length >= 2) {
    const between = text.slice(items[0]!.end, items[1]!.start);
    if (/^\s*,\s*$/.test(between)) return between;
  }
  return ', ';
}

/** The edits that make `site` read `target`. */
export function editsTo(text: string, site: ServerSite, target: Invocation, config: ParsedConfig): Edit[] {
  const command = site.command!;
  const edits: Edit[] = [];
  const commandText = target.command.raw ?? (target.command.value === command.value ? command.raw : config.quote(target.command.value));
  if (commandText !== command.raw) edits.push({ offset: command.start, length: command.end - command.start, content: commandText });
  const wanted = target.args;
  if (!site.args) {
    if (wanted.length > 0) edits.push(site.addArgs!(`[${wanted.map((item) => itemText(item, config)).join(', ')}]`));
    return edits;
  }
  const items = site.args.items;
  let common = 0;
  while (
    common < items.length &&
    common < wanted.length &&
    items[items.length - 1 - common]!.value === wanted[wanted.length - 1 - common]!.value
  ) {
    common++;
  }
  const removed = items.length - common;
  const added = wanted.slice(0, wanted.length - common).map((item) => itemText(item, config));
  const separator = separatorOf(text, site);
  if (removed > 0 && added.length > 0) {
    edits.push({ offset: items[0]!.start, length: items[removed - 1]!.end - items[0]!.start, content: added.join(separator) });
  } else if (added.length > 0) {
    if (items.length > 0) edits.push({ offset: items[0]!.start, length: 0, content: added.join(separator) + separator });
    else edits.push({ offset: site.args.open, length: 0, content: added.join(', ') });
  } else if (removed > 0) {
    const end = common > 0 ? items[removed]!.start : items[items.length - 1]!.end;
    edits.push({ offset: items[0]!.start, length: end - items[0]!.start, content: '' });
  }
  return edits;
}

function currentInvocation(site: ServerSite): Invocation {
  return { command: site.command!, args: site.args?.items ?? [] };
}

export type Action = 'wrap' | 'repoint' | 'unwrap' | 'none';

/** What install (or, with `undo`, uninstall) does to one stdio server, and the edits for it. */
export function planSite(text: string, site: ServerSite, config: ParsedConfig, launcher: Launcher, undo: boolean): { action: Action; edits: Edit[] } {
  const current = currentInvocation(site);
  const wrapping = wrappingOf(current.command.value, current.args.map((item) => item.value), launcher);
  if (undo) {
    if (!wrapping.wrapped) return { action: 'none', edits: [] };
    return { action: 'unwrap', edits: editsTo(text, site, innerOf(current.args, wrapping), config) };
  }
  if (!wrapping.wrapped) return { action: 'wrap', edits: editsTo(text, site, wrapped(current, launcher), config) };
  if (wrapping.current) return { action: 'none', edits: [] };
  return { action: 'repoint', edits: editsTo(text, site, wrapped(innerOf(current.args, wrapping), launcher, wrapping.options), config) };
}
