// Turns "this server should now read command C, args A" into the smallest splices: the command's
// value replaced, and in args only the elements before the part they have in common. Wrapping
// inserts a prefix, undoing deletes that same prefix, re-pointing replaces one element, so a
// wrap followed by an undo gives the file back byte for byte.
import type { Edit, ParsedConfig, ServerSite } from './model.js';
import type { ServerRecord } from './record.js';
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

export type Action = 'wrap' | 'repoint' | 'unwrap' | 'unwrap-inferred' | 'none';

export interface SitePlan {
  action: Action;
  edits: Edit[];
  /** The record of this server after the change: undefined to drop it, 'keep' to leave it. */
  record: ServerRecord | undefined | 'keep';
}

function sameValues(record: ServerRecord, site: ServerSite): boolean {
  const args = (site.args?.items ?? []).map((item) => item.value);
  return record.wrapped.command === site.command!.value && record.wrapped.args.length === args.length && record.wrapped.args.every((value, i) => value === args[i]);
}

/** The record of a wrap just planned: what it replaced, and what it wrote. */
function recordOf(site: ServerSite, target: Invocation, config: ParsedConfig, earlier: ServerRecord | undefined): ServerRecord {
  const wrote = { command: target.command.value, args: target.args.map((item) => item.value) };
  if (earlier && sameValues(earlier, site)) return { ...earlier, wrapped: wrote };
  const record: ServerRecord = {
    original: {
      command: { value: site.command!.value, raw: site.command!.raw },
      args: site.args ? site.args.items.map((item) => ({ value: item.value, raw: item.raw })) : null,
    },
    wrapped: wrote,
  };
  if (!site.args) {
    const arrayText = `[${target.args.map((item) => itemText(item, config)).join(', ')}]`;
    const content = site.addArgs!(arrayText).content;
    const at = content.indexOf(arrayText);
    record.addedArgs = { head: content.slice(0, at), tail: content.slice(at + arrayText.length) };
  }
  return record;
}

/** The edits that put the recorded original back: the command's text, the args' text, an added args key removed. */
function restoreEdits(text: string, site: ServerSite, record: ServerRecord, config: ParsedConfig): Edit[] {
  const original = record.original;
  if (original.args !== null || !site.args || !record.addedArgs || site.argsAddedAt === undefined) {
    return editsTo(text, site, { command: original.command, args: original.args ?? [] }, config);
  }
  // The text install added, if it is still there as written; else the args key however it is written now.
  const { head, tail } = record.addedArgs;
  const { open, close } = site.args;
  const fits = text.slice(site.argsAddedAt, open - 1) === head && text.slice(close, close + tail.length) === tail;
  const removal = fits ? { offset: site.argsAddedAt, length: close + tail.length - site.argsAddedAt, content: '' } : site.argsRemoval;
  if (!removal) return editsTo(text, site, { command: original.command, args: [] }, config);
  const edits = editsTo(text, { ...site, args: undefined, addArgs: () => ({ offset: 0, length: 0, content: '' }) }, { command: original.command, args: [] }, config);
  edits.push(removal);
  return edits;
}

/** What install (or, with `undo`, uninstall) does to one stdio server, and the edits for it. */
export function planSite(text: string, site: ServerSite, config: ParsedConfig, launcher: Launcher, undo: boolean, earlier?: ServerRecord): SitePlan {
  const current = currentInvocation(site);
  const wrapping = wrappingOf(current.command.value, current.args.map((item) => item.value), launcher);
  if (undo) {
    if (!wrapping.wrapped) return { action: 'none', edits: [], record: earlier === undefined ? 'keep' : undefined };
    if (earlier && sameValues(earlier, site)) return { action: 'unwrap', edits: restoreEdits(text, site, earlier, config), record: undefined };
    return { action: 'unwrap-inferred', edits: editsTo(text, site, innerOf(current.args, wrapping), config), record: undefined };
  }
  if (wrapping.wrapped && wrapping.current) return { action: 'none', edits: [], record: 'keep' };
  const target = wrapping.wrapped ? wrapped(innerOf(current.args, wrapping), launcher, wrapping.options) : wrapped(current, launcher);
  return { action: wrapping.wrapped ? 'repoint' : 'wrap', edits: editsTo(text, site, target, config), record: recordOf(site, target, config, earlier) };
}
