// Detached spawns in JavaScript and TypeScript, found on the TypeScript compiler's syntax tree.
//
// Why the TypeScript compiler API: it parses JS, JSX, TS and TSX synchronously with one parser that
// the project already pins, and its trees are exact (tree-sitter's TS grammar recovers from errors
// silently, which would hide the parse errors this check must report). Only the parser is used: no
// Program and no type checker, so the cost is one createSourceFile per file that passes the
// prefilter, and data flow is followed by hand within one file.
//
// Loaded with require (`import = require` compiles to createRequire): typescript.js is 9 MB of
// CommonJS, and an ESM `import` of it first runs Node's module-format detection and CommonJS
// export scan over all of it, which costs about 0.4 s of start-up for nothing.
import ts = require('typescript');
import { backgroundingIn } from './shell.js';
import type { RawFinding } from './types.js';

type ModuleShape = {
  /** Named exports that start a process. */
  functions: ReadonlySet<string>;
  /** Whether the module's default export is itself a spawn function (`spawn(...)`, `spawn.sync(...)`). */
  callableDefault: boolean;
};

const CHILD_PROCESS: ModuleShape = {
  functions: new Set(['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync']),
  callableDefault: false,
};

const SPAWN_MODULES: ReadonlyMap<string, ModuleShape> = new Map([
  ['child_process', CHILD_PROCESS],
  ['node:child_process', CHILD_PROCESS],
  [
    'execa',
    {
      functions: new Set(['execa', 'execaSync', 'execaCommand', 'execaCommandSync', 'execaNode', '$']),
      callableDefault: true,
    },
  ],
  ['cross-spawn', { functions: new Set(['spawn', 'sync']), callableDefault: true }],
  ['nano-spawn', { functions: new Set(['default']), callableDefault: true }],
  ['tinyexec', { functions: new Set(['x', 'exec', 'xSync', 'execSync']), callableDefault: false }],
]);

/** Type names whose object literals are spawn options on their own, wherever they end up. */
const SPAWN_OPTIONS_TYPE = /^(?:Common)?(?:Spawn|Exec|ExecFile|Fork|Execa|Process)(?:Sync)?Options(?:With\w+)?$/;

/** What a local name stands for. */
type Binding =
  | { kind: 'function' }
  /** A module object: some of its properties are spawn functions. */
  | { kind: 'namespace'; shape: ModuleShape }
  /** A spawn function that also carries spawn functions as properties (cross-spawn, execa's default). */
  | { kind: 'callable'; shape: ModuleShape };


export function scriptKindFor(path: string): ts.ScriptKind {
  if (/\.tsx$/i.test(path)) return ts.ScriptKind.TSX;
  if (/\.[mc]?ts$/i.test(path)) return ts.ScriptKind.TS;
  if (/\.jsx$/i.test(path)) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

export function analyseJs(text: string, path: string): RawFinding[] {
  // JSDoc is not parsed: no rule reads it, and it does not change the tree or the syntax errors.
  const sf = ts.createSourceFile(path, text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, false, scriptKindFor(path));
  return new JsFileAnalysis(sf).run();
}

function unwrap(node: ts.Expression): ts.Expression {
  for (;;) {
    if (
      ts.isParenthesizedExpression(node) ||
      ts.isAsExpression(node) ||
      ts.isSatisfiesExpression(node) ||
      ts.isNonNullExpression(node) ||
      ts.isTypeAssertionExpression(node) ||
      ts.isAwaitExpression(node)
    ) {
      node = node.expression;
    } else {
      return node;
    }
  }
}

function propertyName(name: ts.PropertyName | ts.BindingName | ts.MemberName | undefined): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isComputedPropertyName(name)) {
    const inner = unwrap(name.expression);
    if (ts.isStringLiteral(inner) || ts.isNoSubstitutionTemplateLiteral(inner)) return inner.text;
  }
  return undefined;
}

/** The member name of `a.b` or `a['b']`. */
function memberName(node: ts.Expression): string | undefined {
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isElementAccessExpression(node)) {
    const arg = unwrap(node.argumentExpression);
    if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) return arg.text;
  }
  return undefined;
}

/** `detached` values that leave the child in its owner's group. */
function isFalsy(node: ts.Expression): boolean {
  const value = unwrap(node);
  return (
    value.kind === ts.SyntaxKind.FalseKeyword ||
    value.kind === ts.SyntaxKind.NullKeyword ||
    (ts.isIdentifier(value) && value.text === 'undefined') ||
    (ts.isNumericLiteral(value) && Number(value.text) === 0) ||
    ts.isVoidExpression(value)
  );
}

type FunctionLike = ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression;

class JsFileAnalysis {
  private readonly bindings = new Map<string, Binding>();
  private readonly variables = new Map<string, ts.VariableDeclaration[]>();
  private readonly functions = new Map<string, FunctionLike>();
  /** Writes to a variable after its declaration: `o.detached = v`, `o = {...}`, `Object.assign(o, ...)`. */
  private readonly mutations = new Map<string, ts.Expression[]>();
  private readonly calls: ts.CallExpression[] = [];
  private readonly taggedTemplates: ts.TaggedTemplateExpression[] = [];
  private readonly typedDeclarations: ts.VariableDeclaration[] = [];
  private readonly detachedProperties: ts.ObjectLiteralElementLike[] = [];
  /** Source text of the expressions that hold a child handle (`child`, `this.proc`). */
  private readonly childHandles = new Set<string>();
  private readonly handleAssignments: Array<[ts.Expression, ts.Expression]> = [];
  private readonly findings: RawFinding[] = [];
  /** Evidence nodes already tied to a spawn call, so they are not reported twice. */
  private readonly connected = new Set<ts.Node>();

  constructor(private readonly sf: ts.SourceFile) {}

  run(): RawFinding[] {
    this.reportParseErrors();
    this.collect(this.sf);
    for (const [target, value] of this.handleAssignments) {
      if (this.isSpawnCall(value)) this.childHandles.add(target.getText(this.sf));
    }
    for (const call of this.calls) this.checkCall(call);
    for (const tagged of this.taggedTemplates) this.checkTaggedTemplate(tagged);
    for (const declaration of this.typedDeclarations) this.checkTypedDeclaration(declaration);
    if (this.bindings.size > 0) this.checkLooseLiterals();
    return this.findings;
  }

  private reportParseErrors(): void {
    // parseDiagnostics is not in the public typings but is what tsc itself reports as syntax errors.
    const diagnostics = (this.sf as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics;
    const first = diagnostics?.[0];
    if (!first) return;
    const { line, character } = this.sf.getLineAndCharacterOfPosition(first.start);
    this.findings.push({
      rule: 'parse-error',
      severity: 'error',
      line: line + 1,
      column: character + 1,
      message: `cannot parse: ${ts.flattenDiagnosticMessageText(first.messageText, ' ')} (a detached spawn here could go unseen)`,
      spans: [],
    });
  }

  // --- collection: one walk over the file -------------------------------------------------------

  // Iterative: a file's depth is unbounded (a chain of a thousand calls, a long `+` of strings), and
  // a recursive walk over it overflows the stack. Children are pushed in reverse so that nodes are
  // visited in source order, which the "last declaration before the use" lookups rely on.
  private collect(root: ts.Node): void {
    const stack: ts.Node[] = [root];
    const children: ts.Node[] = [];
    const push = (child: ts.Node): undefined => {
      children.push(child);
      return undefined; // forEachChild stops at a truthy return
    };
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      this.collectNode(node);
      ts.forEachChild(node, push);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as ts.Node);
      children.length = 0;
    }
  }

  // One switch on the kind read once: a chain of ts.isX tests re-reads `kind` from nodes of many
  // shapes (a slow, megamorphic access) for every node of the file.
  private collectNode(node: ts.Node): void {
    switch (node.kind) {
      case ts.SyntaxKind.ImportDeclaration:
        this.collectImport(node as ts.ImportDeclaration);
        break;
      case ts.SyntaxKind.ImportEqualsDeclaration:
        this.collectImportEquals(node as ts.ImportEqualsDeclaration);
        break;
      case ts.SyntaxKind.VariableDeclaration:
        this.collectVariable(node as ts.VariableDeclaration);
        break;
      case ts.SyntaxKind.FunctionDeclaration: {
        const declaration = node as ts.FunctionDeclaration;
        if (declaration.name) this.functions.set(declaration.name.text, declaration);
        break;
      }
      case ts.SyntaxKind.CallExpression:
        this.collectCall(node as ts.CallExpression);
        break;
      case ts.SyntaxKind.TaggedTemplateExpression:
        this.taggedTemplates.push(node as ts.TaggedTemplateExpression);
        break;
      case ts.SyntaxKind.BinaryExpression:
        if ((node as ts.BinaryExpression).operatorToken.kind === ts.SyntaxKind.EqualsToken) this.collectAssignment(node as ts.BinaryExpression);
        break;
      case ts.SyntaxKind.PropertyAssignment:
      case ts.SyntaxKind.ShorthandPropertyAssignment:
        if (propertyName((node as ts.PropertyAssignment | ts.ShorthandPropertyAssignment).name) === 'detached') {
          this.detachedProperties.push(node as ts.PropertyAssignment | ts.ShorthandPropertyAssignment);
        }
        break;
    }
  }

  private collectImport(node: ts.ImportDeclaration): void {
    if (!ts.isStringLiteral(node.moduleSpecifier)) return;
    const shape = SPAWN_MODULES.get(node.moduleSpecifier.text);
    const clause = node.importClause;
    if (!shape || !clause) return;
    if (clause.name) this.bindModuleObject(clause.name.text, shape);
    const named = clause.namedBindings;
    if (named && ts.isNamespaceImport(named)) this.bindModuleObject(named.name.text, shape);
    if (named && ts.isNamedImports(named)) {
      for (const element of named.elements) {
        const imported = (element.propertyName ?? element.name).text;
        if (imported === 'default') this.bindModuleObject(element.name.text, shape);
        else if (shape.functions.has(imported)) this.bindings.set(element.name.text, { kind: 'function' });
      }
    }
  }

  private collectImportEquals(node: ts.ImportEqualsDeclaration): void {
    const reference = node.moduleReference;
    if (ts.isExternalModuleReference(reference) && ts.isStringLiteral(reference.expression)) {
      const shape = SPAWN_MODULES.get(reference.expression.text);
      if (shape) this.bindModuleObject(node.name.text, shape);
    }
  }

  private bindModuleObject(name: string, shape: ModuleShape): void {
    this.bindings.set(name, shape.callableDefault ? { kind: 'callable', shape } : { kind: 'namespace', shape });
  }

  private collectVariable(node: ts.VariableDeclaration): void {
    if (node.type && ts.isTypeReferenceNode(node.type) && this.isSpawnOptionsType(node.type)) {
      this.typedDeclarations.push(node);
    } else if (node.initializer && (ts.isSatisfiesExpression(node.initializer) || ts.isAsExpression(node.initializer))) {
      const type = node.initializer.type;
      if (ts.isTypeReferenceNode(type) && this.isSpawnOptionsType(type)) this.typedDeclarations.push(node);
    }
    if (!node.initializer) return;
    const init = unwrap(node.initializer);
    if (ts.isIdentifier(node.name)) {
      const name = node.name.text;
      const list = this.variables.get(name) ?? [];
      list.push(node);
      this.variables.set(name, list);
      if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) this.functions.set(name, init);
      const module = this.moduleObjectOf(init);
      if (module) this.bindings.set(name, module);
      else if (this.isSpawnFunction(init) || this.isPromisifiedSpawn(init)) this.bindings.set(name, { kind: 'function' });
      this.handleAssignments.push([node.name, init]);
    } else if (ts.isObjectBindingPattern(node.name)) {
      // const { spawn, exec: run } = require('child_process')  /  = cp  /  = await import('execa')
      const module = this.moduleObjectOf(init);
      if (!module) return;
      for (const element of node.name.elements) {
        const imported = propertyName(element.propertyName ?? element.name);
        if (!imported || !ts.isIdentifier(element.name)) continue;
        if (imported === 'default') this.bindModuleObject(element.name.text, module.shape);
        else if (module.shape.functions.has(imported)) this.bindings.set(element.name.text, { kind: 'function' });
      }
    }
  }

  private collectCall(node: ts.CallExpression): void {
    this.calls.push(node);
    // Object.assign(opts, { detached: true }) changes `opts` in place.
    const callee = unwrap(node.expression);
    const target = node.arguments[0];
    if (
      memberName(callee) === 'assign' &&
      ts.isPropertyAccessExpression(callee) &&
      ts.isIdentifier(callee.expression) &&
      callee.expression.text === 'Object' &&
      target &&
      ts.isIdentifier(unwrap(target))
    ) {
      this.addMutation((unwrap(target) as ts.Identifier).text, node);
    }
  }

  private collectAssignment(node: ts.BinaryExpression): void {
    const left = unwrap(node.left);
    this.handleAssignments.push([left, unwrap(node.right)]);
    if (ts.isIdentifier(left)) {
      this.addMutation(left.text, node.right);
      return;
    }
    // opts.detached = v  /  opts['detached'] = v  /  opts.nodeOptions = {...}
    if ((ts.isPropertyAccessExpression(left) || ts.isElementAccessExpression(left)) && ts.isIdentifier(unwrap(left.expression))) {
      const key = memberName(left);
      if (key === 'detached' || key === 'nodeOptions') this.addMutation((unwrap(left.expression) as ts.Identifier).text, node);
    }
  }

  private addMutation(name: string, expression: ts.Expression): void {
    const list = this.mutations.get(name) ?? [];
    list.push(expression);
    this.mutations.set(name, list);
  }

  private isSpawnOptionsType(type: ts.TypeReferenceNode): boolean {
    const name = ts.isIdentifier(type.typeName) ? type.typeName.text : type.typeName.right.text;
    return SPAWN_OPTIONS_TYPE.test(name);
  }

  // --- what names and expressions stand for ------------------------------------------------------

  /** `require('m')`, `import('m')`, or a name bound to a spawn module's object. */
  private moduleObjectOf(expression: ts.Expression): Exclude<Binding, { kind: 'function' }> | undefined {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) {
      const binding = this.bindings.get(node.text);
      return binding && binding.kind !== 'function' ? binding : undefined;
    }
    if (ts.isCallExpression(node) && node.arguments.length === 1) {
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const specifier = node.arguments[0] && unwrap(node.arguments[0]);
      if ((isRequire || isImport) && specifier && ts.isStringLiteral(specifier)) {
        const shape = SPAWN_MODULES.get(specifier.text);
        if (!shape) return undefined;
        // `import('cross-spawn')` yields a namespace whose default is the function; calling
        // properties of it still reaches a spawn, so both count as callable module objects.
        return shape.callableDefault ? { kind: 'callable', shape } : { kind: 'namespace', shape };
      }
    }
    return undefined;
  }

  /** Whether `expression` evaluates to a function that starts a process. */
  private isSpawnFunction(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) {
      const binding = this.bindings.get(node.text);
      return binding?.kind === 'function' || binding?.kind === 'callable';
    }
    const name = memberName(node);
    if (name !== undefined && (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node))) {
      const owner = this.moduleObjectOf(node.expression);
      if (!owner) return false;
      return owner.shape.functions.has(name) || (owner.kind === 'callable' && name !== 'then');
    }
    // execa({ detached: true }) returns a spawn function bound to those options; `f()()()` is
    // followed by a loop, not recursion, since such a chain can be any length.
    if (ts.isCallExpression(node)) {
      let callee = unwrap(node.expression);
      while (ts.isCallExpression(callee)) callee = unwrap(callee.expression);
      return this.isSpawnFunction(callee);
    }
    return false;
  }

  /** `promisify(exec)` / `util.promisify(cp.execFile)`. */
  private isPromisifiedSpawn(expression: ts.Expression): boolean {
    const node = unwrap(expression);
    if (!ts.isCallExpression(node) || node.arguments.length !== 1) return false;
    const callee = unwrap(node.expression);
    const name = ts.isIdentifier(callee) ? callee.text : memberName(callee);
    const argument = node.arguments[0];
    return name === 'promisify' && argument !== undefined && this.isSpawnFunction(argument);
  }

  private isSpawnCall(expression: ts.Expression): expression is ts.CallExpression {
    const node = unwrap(expression);
    return ts.isCallExpression(node) && this.isSpawnFunction(node.expression);
  }

  /** The declaration `name` most likely refers to at `use`: the last one before it, else the first. */
  private declarationOf(name: string, use: ts.Node): ts.VariableDeclaration | undefined {
    const list = this.variables.get(name);
    if (!list) return undefined;
    let chosen = list[0];
    for (const declaration of list) if (declaration.pos < use.pos) chosen = declaration;
    return chosen;
  }

  /**
   * The node that sets a detaching `detached` in the options `expression` evaluates to, following
   * same-file variables, spreads, ternaries, Object.assign, option-builder functions and writes.
   */
  private detachingNode(expression: ts.Expression, seen: Set<ts.Node>, depth = 0): ts.Node | undefined {
    const node = unwrap(expression);
    if (depth > 16 || seen.has(node)) return undefined;
    seen.add(node);
    const next = (e: ts.Expression | undefined) => (e ? this.detachingNode(e, seen, depth + 1) : undefined);

    if (ts.isObjectLiteralExpression(node)) {
      // Later properties override earlier ones, so the last word about `detached` wins.
      let found: ts.Node | undefined;
      for (const property of node.properties) {
        if (ts.isSpreadAssignment(property)) {
          found = next(property.expression) ?? found;
          continue;
        }
        const key = propertyName(property.name);
        if (key === 'detached') {
          if (ts.isPropertyAssignment(property)) found = isFalsy(property.initializer) ? undefined : property;
          else if (ts.isShorthandPropertyAssignment(property)) found = this.shorthandDetaches(property) ? property : undefined;
          else found = property; // a getter or method: not a literal false
        } else if (key === 'nodeOptions') {
          // tinyexec passes these through to child_process.
          if (ts.isPropertyAssignment(property)) found = next(property.initializer) ?? found;
          else if (ts.isShorthandPropertyAssignment(property)) found = next(property.name) ?? found;
        }
      }
      return found;
    }
    if (ts.isIdentifier(node)) {
      let found = next(this.declarationOf(node.text, node)?.initializer);
      for (const write of this.mutations.get(node.text) ?? []) found = this.writeDetaches(write, seen, depth) ?? found;
      return found;
    }
    if (ts.isConditionalExpression(node)) return next(node.whenTrue) ?? next(node.whenFalse);
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      if (
        op === ts.SyntaxKind.BarBarToken ||
        op === ts.SyntaxKind.QuestionQuestionToken ||
        op === ts.SyntaxKind.AmpersandAmpersandToken ||
        op === ts.SyntaxKind.CommaToken
      ) {
        return next(node.right) ?? (op === ts.SyntaxKind.CommaToken ? undefined : next(node.left));
      }
      return undefined;
    }
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression);
      if (memberName(callee) === 'assign' && ts.isPropertyAccessExpression(callee)) {
        let found: ts.Node | undefined;
        for (const argument of node.arguments) found = next(argument) ?? found;
        return found;
      }
      const builder = ts.isIdentifier(callee) ? this.functions.get(callee.text) : undefined;
      if (builder) return this.returnedDetaching(builder, seen, depth);
      if (ts.isArrowFunction(callee) || ts.isFunctionExpression(callee)) return this.returnedDetaching(callee, seen, depth);
    }
    return undefined;
  }

  private shorthandDetaches(property: ts.ShorthandPropertyAssignment): boolean {
    const initializer = this.declarationOf(property.name.text, property)?.initializer;
    // An unknown value is not a literal false: it counts.
    return initializer === undefined || !isFalsy(initializer);
  }

  private writeDetaches(write: ts.Expression, seen: Set<ts.Node>, depth: number): ts.Node | undefined {
    if (ts.isBinaryExpression(write)) {
      const key = memberName(unwrap(write.left));
      if (key === 'detached') return isFalsy(write.right) ? undefined : write;
      if (key === 'nodeOptions') return this.detachingNode(write.right, seen, depth + 1);
      return undefined;
    }
    return this.detachingNode(write, seen, depth + 1);
  }

  private returnedDetaching(fn: FunctionLike, seen: Set<ts.Node>, depth: number): ts.Node | undefined {
    if (!fn.body) return undefined;
    if (!ts.isBlock(fn.body)) return this.detachingNode(fn.body, seen, depth + 1);
    // The returns of this function, not of functions nested in it, in source order; iterative,
    // since a body's depth is unbounded.
    const stack: ts.Node[] = [fn.body];
    const children: ts.Node[] = [];
    const push = (child: ts.Node): undefined => {
      children.push(child);
      return undefined;
    };
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      if (ts.isReturnStatement(node)) {
        const found = node.expression ? this.detachingNode(node.expression, seen, depth + 1) : undefined;
        if (found) return found;
        continue;
      }
      if (node !== fn.body && ts.isFunctionLike(node)) continue;
      ts.forEachChild(node, push);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as ts.Node);
      children.length = 0;
    }
    return undefined;
  }

  // --- the checks ---------------------------------------------------------------------------------

  private checkCall(call: ts.CallExpression): void {
    const callee = unwrap(call.expression);
    if (memberName(callee) === 'unref' && call.arguments.length === 0 && (ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee))) {
      const target = unwrap(callee.expression);
      if (this.isSpawnCall(target) || this.childHandles.has(target.getText(this.sf))) {
        this.report(ts.isPropertyAccessExpression(callee) ? callee.name : callee, 'js-unref-child', 'error', '`.unref()` on a child process lets the owner exit while the child keeps running', call);
      }
      return;
    }
    if (!this.isSpawnFunction(callee)) return;
    for (const argument of call.arguments) {
      const evidence = this.detachingNode(argument, new Set());
      if (evidence) {
        this.connected.add(evidence);
        const where = this.lineOf(evidence.getStart(this.sf));
        const callLine = this.lineOf(call.getStart(this.sf));
        const detail = where === callLine ? '' : ` (set on line ${where})`;
        this.report(call, 'js-detached-spawn', 'error', `spawn with \`detached\` set${detail}: the child leads its own group and outlives its owner`, call, evidence);
        break;
      }
    }
    for (const argument of call.arguments) this.checkShellText(argument);
  }

  private checkTaggedTemplate(tagged: ts.TaggedTemplateExpression): void {
    if (this.isSpawnFunction(tagged.tag)) this.checkShellText(tagged.template);
  }

  private checkShellText(expression: ts.Expression): void {
    const node = unwrap(expression);
    if (ts.isArrayLiteralExpression(node)) {
      for (const element of node.elements) this.checkShellText(element);
      return;
    }
    let text: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node)) {
      // Substitutions become a neutral word, so `${cmd} &` still reads as backgrounding.
      text = node.head.text + node.templateSpans.map((span) => ` x ${span.literal.text}`).join('');
    }
    const construct = text === undefined ? undefined : backgroundingIn(text);
    if (construct) {
      this.report(node, 'shell-background', 'error', `shell command starts a background process (${construct}) that outlives its owner`, node);
    }
  }

  private checkTypedDeclaration(declaration: ts.VariableDeclaration): void {
    if (!declaration.initializer) return;
    const evidence = this.detachingNode(declaration.initializer, new Set());
    if (!evidence || this.connected.has(evidence)) return;
    this.connected.add(evidence);
    this.report(evidence, 'js-detached-spawn', 'error', 'spawn options with `detached` set: a child started with them outlives its owner', declaration);
  }

  private checkLooseLiterals(): void {
    for (const property of this.detachedProperties) {
      if (this.connected.has(property)) continue;
      if (ts.isPropertyAssignment(property) && isFalsy(property.initializer)) continue;
      if (ts.isShorthandPropertyAssignment(property) && !this.shorthandDetaches(property)) continue;
      this.report(property, 'js-detached-literal', 'warning', '`detached` set in a file that spawns processes; not traced to a spawn call, check where it goes', property);
    }
  }

  private lineOf(position: number): number {
    return this.sf.getLineAndCharacterOfPosition(position).line + 1;
  }

  private report(at: ts.Node, rule: RawFinding['rule'], severity: RawFinding['severity'], message: string, span: ts.Node, evidence?: ts.Node): void {
    const start = this.sf.getLineAndCharacterOfPosition(at.getStart(this.sf));
    const spans: Array<[number, number]> = [[this.lineOf(span.getStart(this.sf)), this.lineOf(span.end)]];
    if (evidence) {
      const line = this.lineOf(evidence.getStart(this.sf));
      spans.push([Math.max(1, line - 1), this.lineOf(evidence.end)]);
    }
    this.findings.push({ rule, severity, line: start.line + 1, column: start.character + 1, message, spans });
  }
}
