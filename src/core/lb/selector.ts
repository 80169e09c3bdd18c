// The Kubernetes label-selector string grammar (apimachinery `labels.Parse`), as used by the
// `loadbalancer-node-selector` annotation: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
// `a`, `!a`, and the integer comparisons `a>1`, `a<1`; requirements joined by `,` (AND).

export type SelectorOperator = 'exists' | 'not-exists' | '=' | '!=' | 'in' | 'notin' | '>' | '<';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  /** Empty for exists/not-exists; one value for `=`, `!=`, `>`, `<`; one or more for in/notin. */
  readonly values: readonly string[];
}

export interface LabelSelector {
  /** The selector as written, for messages. */
  readonly source: string;
  /** All must match (AND). Empty: matches every label set. */
  readonly requirements: readonly LabelRequirement[];
}

/** A selector string that does not follow the grammar. `position` is a 0-based character offset. */
export class SelectorSyntaxError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.name = 'SelectorSyntaxError';
    this.position = position;
  }
}

type TokenKind =
  | 'identifier'
  | 'in'
  | 'notin'
  | '='
  | '=='
  | '!='
  | '!'
  | '>'
  | '<'
  | '('
  | ')'
  | ','
  | 'end';

interface Token {
  kind: TokenKind;
  text: string;
  position: number;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (SPECIAL.has(ch)) {
      const two = source.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: two, text: two, position: i });
        i += 2;
      } else {
        tokens.push({ kind: ch as TokenKind, text: ch, position: i });
        i += 1;
      }
      continue;
    }
    const start = i;
    while (i < source.length && !SPECIAL.has(source[i]!) && !/\s/.test(source[i]!)) i += 1;
    const text = source.slice(start, i);
    const kind: TokenKind = text === 'in' ? 'in' : text === 'notin' ? 'notin' : 'identifier';
    tokens.push({ kind, text, position: start });
  }
  tokens.push({ kind: 'end', text: 'end of string', position: source.length });
  return tokens;
}

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a valid label key (qualified name), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== undefined) {
    if (prefix.length === 0) return 'the prefix before "/" must not be empty';
    if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      return `the prefix "${prefix}" must be a lower-case DNS subdomain (e.g. example.com)`;
    }
  }
  if (name.length === 0) return 'the name must not be empty';
  if (name.length > 63) return 'the name must be at most 63 characters';
  if (!NAME_PART.test(name)) {
    return 'the name must consist of letters, digits, "-", "_" or ".", and start and end with a letter or digit';
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is. Empty is valid. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length === 0) return undefined;
  if (value.length > 63) return 'must be at most 63 characters';
  if (!NAME_PART.test(value)) {
    return 'must consist of letters, digits, "-", "_" or ".", and start and end with a letter or digit';
  }
  return undefined;
}

class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index]!;
  }
  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== 'end') this.index += 1;
    return token;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    if (this.peek().kind === 'end') return requirements;
    for (;;) {
      requirements.push(this.requirement());
      const after = this.next();
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') {
        throw new SelectorSyntaxError(
          `found '${after.text}' at position ${after.position}, expected ',' or end of string`,
          after.position,
        );
      }
      const start = this.peek();
      if (start.kind !== 'identifier' && start.kind !== '!') {
        throw new SelectorSyntaxError(
          `found '${start.text}' at position ${start.position}, expected a label key or '!' after ','`,
          start.position,
        );
      }
    }
  }

  private requirement(): LabelRequirement {
    const first = this.next();
    if (first.kind === '!') {
      const key = this.key(this.next());
      return { key, operator: 'not-exists', values: [] };
    }
    const key = this.key(first);
    const op = this.peek();
    if (op.kind === 'end' || op.kind === ',') return { key, operator: 'exists', values: [] };
    this.next();
    switch (op.kind) {
      case '=':
      case '==':
        return { key, operator: '=', values: [this.exactValue()] };
      case '!=':
        return { key, operator: '!=', values: [this.exactValue()] };
      case '>':
      case '<': {
        const value = this.exactValue();
        if (!/^[+-]?\d+$/.test(value)) {
          throw new SelectorSyntaxError(
            `the value of '${key} ${op.kind}' must be an integer, found '${value}'`,
            op.position,
          );
        }
        return { key, operator: op.kind, values: [value] };
      }
      case 'in':
      case 'notin':
        return { key, operator: op.kind, values: this.valueSet() };
      default:
        throw new SelectorSyntaxError(
          `found '${op.text}' at position ${op.position}, expected one of =, ==, !=, in, notin, >, <, ',' or end of string after key '${key}'`,
          op.position,
        );
    }
  }

  private key(token: Token): string {
    if (token.kind !== 'identifier') {
      throw new SelectorSyntaxError(
        `found '${token.text}' at position ${token.position}, expected a label key`,
        token.position,
      );
    }
    const problem = labelKeyProblem(token.text);
    if (problem !== undefined) {
      throw new SelectorSyntaxError(`invalid label key '${token.text}': ${problem}`, token.position);
    }
    return token.text;
  }

  private value(token: Token): string {
    const problem = labelValueProblem(token.text);
    if (problem !== undefined) {
      throw new SelectorSyntaxError(`invalid label value '${token.text}': ${problem}`, token.position);
    }
    return token.text;
  }

  private exactValue(): string {
    const token = this.peek();
    if (token.kind === 'end' || token.kind === ',') return '';
    if (token.kind !== 'identifier') {
      throw new SelectorSyntaxError(
        `found '${token.text}' at position ${token.position}, expected a label value`,
        token.position,
      );
    }
    this.next();
    return this.value(token);
  }

  /** `(a,b)`; like apimachinery, an empty slot (`()`, `(a,)`) stands for the empty value. */
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') {
      throw new SelectorSyntaxError(
        `found '${open.text}' at position ${open.position}, expected '(' to open the value list`,
        open.position,
      );
    }
    const values: string[] = [];
    let slotFilled = false;
    for (;;) {
      const token = this.next();
      if (token.kind === 'identifier' && !slotFilled) {
        values.push(this.value(token));
        slotFilled = true;
      } else if (token.kind === ',' || token.kind === ')') {
        if (!slotFilled) values.push('');
        if (token.kind === ')') return [...new Set(values)];
        slotFilled = false;
      } else {
        throw new SelectorSyntaxError(
          `found '${token.text}' at position ${token.position}, expected a label value, ',' or ')' in the value list`,
          token.position,
        );
      }
    }
  }
}

/** Parses a selector string. Throws `SelectorSyntaxError`. An empty string selects everything. */
export function parseLabelSelector(source: string): LabelSelector {
  return { source, requirements: new Parser(tokenize(source)).parse() };
}

/** Whether a label set satisfies every requirement of the selector. */
export function selectorMatches(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const set = labels ?? {};
  return selector.requirements.every((requirement) => requirementMatches(requirement, set));
}

function requirementMatches(
  requirement: LabelRequirement,
  labels: Readonly<Record<string, string>>,
): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = has ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'exists':
      return has;
    case 'not-exists':
      return !has;
    case '=':
    case 'in':
      return value !== undefined && requirement.values.includes(value);
    case '!=':
    case 'notin':
      return value === undefined || !requirement.values.includes(value);
    case '>':
    case '<': {
      if (value === undefined || !/^[+-]?\d+$/.test(value)) return false;
      const actual = BigInt(value);
      const bound = BigInt(requirement.values[0]!);
      return requirement.operator === '>' ? actual > bound : actual < bound;
    }
  }
}
