import { readdirSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * Finds the SQL statements written in the source of the PostgreSQL adapters
 * and spells each out as PostgreSQL would receive it, so that a test can have
 * PostgreSQL itself parse and resolve them (PREPARE) against a database built
 * from the entities alone.
 *
 * A statement is a string or template literal that starts with SELECT,
 * INSERT, UPDATE, DELETE or WITH. Its substitutions are followed where the
 * source says what they are: constants (in the file or imported), both
 * branches of a `?:`, a local array of fragments joined (every element ever
 * pushed), and the fields of a constant list a `for ... of` loop walks (one
 * statement per element). Whatever else is substituted is a value and becomes
 * a bind parameter (`$n`), as `param(value)` and `$${values.length}` are;
 * the `?` values of MikroORM's `em.execute(sql, values)` become `$n` too.
 */

const ROOT = path.resolve(import.meta.dirname, "../../..");
const SQL_START = /^\s*(select|insert|update|delete|with)\s/i;
/** Stands for a value in the text until the statement's parameters are numbered (no SQL holds it). */
const VALUE = "@@value@@";

export interface SqlStatement {
  /** Where it is written, `src/...:line`. */
  readonly at: string;
  /** The statement as sent, one per combination of its substitutions. */
  readonly variants: readonly string[];
}

/** Every statement in `folders` (relative to the repository), but not in their subfolders named in `skip`. */
export function collectSqlStatements(folders: readonly string[], skip: readonly string[] = []): SqlStatement[] {
  const files = folders.flatMap((folder) => tsFiles(path.join(ROOT, folder))).filter((file) => !skip.some((s) => file.includes(`/${s}/`)));
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    },
  });
  if (!config) throw new Error("tsconfig.json not readable");
  const program = ts.createProgram(files, config.options);
  const checker = program.getTypeChecker();
  const statements: SqlStatement[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) continue;
    const visit = (node: ts.Node): void => {
      if (isSqlLiteral(node) && !insideSubstitution(node)) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        const at = `${path.relative(ROOT, file)}:${line + 1}`;
        const variants = new Evaluator(checker).statement(node);
        statements.push({ at, variants: passedToOrm(node) ? variants.map(numberOrmPlaceholders) : variants });
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return statements;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

type Literal = ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | ts.TemplateExpression;

function isSqlLiteral(node: ts.Node): node is Literal {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return SQL_START.test(node.text);
  return ts.isTemplateExpression(node) && SQL_START.test(node.head.text);
}

/** `em.execute(sql, values)`: MikroORM's raw SQL, whose values are `?` (and a literal `?` is `??`). */
function passedToOrm(node: ts.Node): boolean {
  const call = node.parent;
  if (!ts.isCallExpression(call) || call.arguments[0] !== node) return false;
  return ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === "execute";
}

function numberOrmPlaceholders(text: string): string {
  let next = 0;
  return text.replace(/\?\??/g, (mark) => (mark === "??" ? "?" : `$${++next}`));
}

/** A subquery spelled inside another statement's substitution is checked as part of it. */
function insideSubstitution(node: ts.Node): boolean {
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isTemplateSpan(at) && isSqlLiteral(at.parent)) return true;
  }
  return false;
}

/** Values bound by a `for (const { a, b } of LIST)` loop: name -> the element's expression (undefined when absent). */
type Bindings = ReadonlyMap<ts.Symbol, ts.Expression | undefined>;

class Evaluator {
  readonly #checker: ts.TypeChecker;

  constructor(checker: ts.TypeChecker) {
    this.#checker = checker;
  }

  /** The statement's variants with their values numbered as bind parameters. */
  statement(node: Literal): string[] {
    const loops = this.#loopsUsedBy(node);
    const bindings = loops.length === 0 ? [new Map()] : this.#loopBindings(loops);
    const texts = bindings.flatMap((b) => this.#text(node, b) ?? [VALUE]);
    return [...new Set(texts.map(numberParameters))];
  }

  /** The texts `node` may stand for, or undefined when the source does not say. */
  #text(node: ts.Expression, bindings: Bindings): string[] | undefined {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
    if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) {
      return this.#text(node.expression, bindings);
    }
    if (ts.isTemplateExpression(node)) {
      let texts = [node.head.text];
      for (const span of node.templateSpans) {
        const parts = this.#text(span.expression, bindings) ?? [VALUE];
        texts = texts.flatMap((t) => parts.map((p) => t + p + span.literal.text));
      }
      return texts;
    }
    if (ts.isConditionalExpression(node)) {
      const known = this.#truth(node.condition, bindings);
      if (known !== undefined) return this.#text(known ? node.whenTrue : node.whenFalse, bindings);
      const a = this.#text(node.whenTrue, bindings);
      const b = this.#text(node.whenFalse, bindings);
      return a && b ? [...a, ...b] : undefined;
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const a = this.#text(node.left, bindings);
      const b = this.#text(node.right, bindings);
      return a && b ? a.flatMap((x) => b.map((y) => x + y)) : undefined;
    }
    if (ts.isIdentifier(node)) {
      const symbol = this.#symbol(node);
      if (symbol && bindings.has(symbol)) {
        const bound = bindings.get(symbol);
        return bound ? this.#text(bound, bindings) : undefined;
      }
      const init = this.#constInitializer(node);
      return init ? this.#text(init, bindings) : undefined;
    }
    if (ts.isCallExpression(node)) return this.#joined(node, bindings);
    return undefined;
  }

  /** `fragments.join(separator)` of a local `const fragments = [...]` and every `fragments.push(...)` in its function. */
  #joined(node: ts.CallExpression, bindings: Bindings): string[] | undefined {
    const callee = node.expression;
    if (!ts.isPropertyAccessExpression(callee) || callee.name.text !== "join" || !ts.isIdentifier(callee.expression)) return undefined;
    const declaration = this.#symbol(callee.expression)?.valueDeclaration;
    if (!declaration || !ts.isVariableDeclaration(declaration) || !declaration.initializer) return undefined;
    if (!ts.isArrayLiteralExpression(declaration.initializer)) return undefined;
    const elements: ts.Expression[] = [...declaration.initializer.elements];
    const scope = ts.findAncestor(declaration, ts.isFunctionLike) ?? declaration.getSourceFile();
    const symbol = this.#symbol(callee.expression);
    const findPushes = (n: ts.Node): void => {
      if (
        ts.isCallExpression(n) &&
        ts.isPropertyAccessExpression(n.expression) &&
        n.expression.name.text === "push" &&
        ts.isIdentifier(n.expression.expression) &&
        this.#symbol(n.expression.expression) === symbol
      ) {
        elements.push(...n.arguments);
      }
      ts.forEachChild(n, findPushes);
    };
    findPushes(scope);
    const [separatorNode] = node.arguments;
    const separator = separatorNode ? this.#text(separatorNode, bindings)?.[0] : ",";
    if (separator === undefined) return undefined;
    const parts = elements.map((e) => this.#text(e, bindings)?.[0] ?? VALUE);
    return [parts.join(separator)];
  }

  /** Whether a condition is known to hold, for loop-bound names (present or absent in the element). */
  #truth(node: ts.Expression, bindings: Bindings): boolean | undefined {
    if (!ts.isIdentifier(node)) return undefined;
    const symbol = this.#symbol(node);
    return symbol && bindings.has(symbol) ? bindings.get(symbol) !== undefined : undefined;
  }

  #symbol(node: ts.Identifier): ts.Symbol | undefined {
    const symbol = this.#checker.getSymbolAtLocation(node);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) return this.#checker.getAliasedSymbol(symbol);
    return symbol;
  }

  #constInitializer(node: ts.Identifier): ts.Expression | undefined {
    const declaration = this.#symbol(node)?.valueDeclaration;
    if (!declaration || !ts.isVariableDeclaration(declaration) || !declaration.initializer) return undefined;
    const list = declaration.parent;
    if (!ts.isVariableDeclarationList(list) || !(list.flags & ts.NodeFlags.Const)) return undefined;
    return ts.isArrayLiteralExpression(declaration.initializer) ? undefined : declaration.initializer;
  }

  /** The `for (const { ... } of CONSTANT_LIST)` loops whose names the statement uses. */
  #loopsUsedBy(node: ts.Node): ts.ForOfStatement[] {
    const loops = new Set<ts.ForOfStatement>();
    const visit = (n: ts.Node): void => {
      if (ts.isIdentifier(n)) {
        const declaration = this.#symbol(n)?.valueDeclaration;
        const loop = declaration && ts.isBindingElement(declaration) ? ts.findAncestor(declaration, ts.isForOfStatement) : undefined;
        if (loop) loops.add(loop);
      }
      ts.forEachChild(n, visit);
    };
    visit(node);
    return [...loops];
  }

  /** One set of bindings per element of the loops' constant lists (every combination when several loops). */
  #loopBindings(loops: readonly ts.ForOfStatement[]): Map<ts.Symbol, ts.Expression | undefined>[] {
    let all: Map<ts.Symbol, ts.Expression | undefined>[] = [new Map()];
    for (const loop of loops) {
      const list = ts.isIdentifier(loop.expression) ? this.#listElements(loop.expression) : undefined;
      const declaration = ts.isVariableDeclarationList(loop.initializer) ? loop.initializer.declarations[0] : undefined;
      if (!list || !declaration || !ts.isObjectBindingPattern(declaration.name)) return [new Map()];
      const pattern = declaration.name;
      const next: Map<ts.Symbol, ts.Expression | undefined>[] = [];
      for (const element of list) {
        if (!ts.isObjectLiteralExpression(element)) return [new Map()];
        for (const previous of all) {
          const bound = new Map(previous);
          for (const binding of pattern.elements) {
            if (!ts.isIdentifier(binding.name)) continue;
            const key = binding.propertyName && ts.isIdentifier(binding.propertyName) ? binding.propertyName.text : binding.name.text;
            const property = element.properties.find((p) => p.name && ts.isIdentifier(p.name) && p.name.text === key);
            const symbol = this.#checker.getSymbolAtLocation(binding.name);
            if (symbol) bound.set(symbol, property && ts.isPropertyAssignment(property) ? property.initializer : undefined);
          }
          next.push(bound);
        }
      }
      all = next;
    }
    return all;
  }

  #listElements(node: ts.Identifier): readonly ts.Expression[] | undefined {
    const declaration = this.#symbol(node)?.valueDeclaration;
    if (!declaration || !ts.isVariableDeclaration(declaration) || !declaration.initializer) return undefined;
    return ts.isArrayLiteralExpression(declaration.initializer) ? declaration.initializer.elements : undefined;
  }
}

/** Numbers the values after the statement's own highest `$n` (a `$` written before one, as in `$${values.length}`, is its own). */
function numberParameters(text: string): string {
  let next = Math.max(0, ...[...text.replaceAll(VALUE, "").matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  return text.replace(/\$?@@value@@/g, () => `$${++next}`);
}
