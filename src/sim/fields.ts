// Request-body validation with Django REST Framework's stock messages in the real API's error
// shape: one string per field (docs/cloudscale-api.md, "Error answers"). Messages from
// cloudscale's own validators (e.g. "Expect one of …") are kept where they are known.

import type { Tags } from '../core/cloudscale/types.js';
import { parseCidr, parseIp, type IpAddress } from './net.js';
import { UUID_PATTERN } from './seed.js';

/**
 * An error answer: thrown by handlers, written by the HTTP layer as JSON. A 400's field errors
 * are answered one string per field, however the handler nested them (`oneStringPerField`).
 */
export class ApiError extends Error {
  readonly body: unknown;
  constructor(
    readonly status: number,
    body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    const answered = status === 400 && isDict(body) ? oneStringPerField(body) : body;
    super(`${status} ${JSON.stringify(answered)}`);
    this.body = answered;
  }
}

/**
 * A 400 body as the real API and cloudscale's SDK shape it, a flat map of field → one string
 * (the SDK cannot read a list per field): the messages of one field joined by spaces, and
 * nested errors under the path of their field, `vip_addresses[0].subnet` for an item of a
 * list, `http.host` for a field of an object, `allowed_cidrs.1` for an entry of a list field.
 * An item without errors (`{}`) leaves nothing.
 */
export function oneStringPerField(errors: Dict): Record<string, string> {
  const flat: Record<string, string> = {};
  const put = (path: string, value: unknown): void => {
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      if (value.length > 0) flat[path] = value.join(' ');
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => put(`${path}[${index}]`, item));
    } else if (isDict(value)) {
      for (const [key, nested] of Object.entries(value)) put(`${path}.${key}`, nested);
    } else if (value !== undefined && value !== null) {
      flat[path] = String(value);
    }
  };
  for (const [field, value] of Object.entries(errors)) put(field, value);
  return flat;
}

export const notFound = (): ApiError => new ApiError(404, { detail: 'Not found.' });
export const badRequest = (detail: string): ApiError => new ApiError(400, { detail });

export type Dict = Record<string, unknown>;

export function isDict(value: unknown): value is Dict {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const REQUIRED = 'This field is required.';
const NOT_NULL = 'This field may not be null.';

interface FieldOptions {
  required?: boolean;
  nullable?: boolean;
}

/**
 * Reads fields of one request body and collects per-field messages; `check()` throws them as
 * one 400 answer. Each reader returns `undefined` when the field is absent or invalid, `null`
 * only for a nullable field sent as null.
 */
export class Fields {
  readonly errors: Record<string, unknown> = {};

  constructor(readonly body: Dict) {}

  has(key: string): boolean {
    return Object.hasOwn(this.body, key);
  }

  /** Adds a message for `key`; a second one for the same field follows the first in its string. */
  add(key: string, message: string): void {
    const before = this.errors[key];
    this.errors[key] = typeof before === 'string' ? `${before} ${message}` : message;
  }

  /** Throws the collected field errors as a 400 answer, if there are any. */
  check(): void {
    if (Object.keys(this.errors).length > 0) throw new ApiError(400, this.errors);
  }

  /** Handles absent and null values; returns the value to validate, or a final result. */
  private present(key: string, options: FieldOptions): { value: unknown } | { result: undefined | null } {
    if (!this.has(key)) {
      if (options.required === true) this.add(key, REQUIRED);
      return { result: undefined };
    }
    const value = this.body[key];
    if (value === null) {
      if (options.nullable === true) return { result: null };
      this.add(key, NOT_NULL);
      return { result: undefined };
    }
    return { value };
  }

  string(key: string, options: FieldOptions & { allowBlank?: boolean; maxLength?: number } = {}): string | null | undefined {
    const got = this.present(key, options);
    if ('result' in got) return got.result;
    const { value } = got;
    if (typeof value !== 'string' && typeof value !== 'number') {
      this.add(key, 'Not a valid string.');
      return undefined;
    }
    const text = String(value);
    if (text.trim() === '' && options.allowBlank !== true) {
      this.add(key, 'This field may not be blank.');
      return undefined;
    }
    if (options.maxLength !== undefined && text.length > options.maxLength) {
      this.add(key, `Ensure this field has no more than ${options.maxLength} characters.`);
      return undefined;
    }
    return text;
  }

  integer(
    key: string,
    options: FieldOptions & { min?: number; max?: number; rangeMessage?: string } = {},
  ): number | null | undefined {
    const got = this.present(key, options);
    if ('result' in got) return got.result;
    const { value } = got;
    const number =
      typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(number)) {
      this.add(key, 'A valid integer is required.');
      return undefined;
    }
    if (options.min !== undefined && number < options.min) {
      this.add(key, options.rangeMessage ?? `Ensure this value is greater than or equal to ${options.min}.`);
      return undefined;
    }
    if (options.max !== undefined && number > options.max) {
      this.add(key, options.rangeMessage ?? `Ensure this value is less than or equal to ${options.max}.`);
      return undefined;
    }
    return number;
  }

  boolean(key: string, options: FieldOptions = {}): boolean | null | undefined {
    const got = this.present(key, options);
    if ('result' in got) return got.result;
    if (typeof got.value !== 'boolean') {
      this.add(key, 'Must be a valid boolean.');
      return undefined;
    }
    return got.value;
  }

  /**
   * One of `choices`. `style: 'drf'` gives DRF's `"x" is not a valid choice.`; `'expect'` gives
   * cloudscale's `Expect one of …` seen for pool and listener enums.
   */
  choice<T extends string>(
    key: string,
    choices: readonly T[],
    options: FieldOptions & { style?: 'drf' | 'expect' | 'choose' } = {},
  ): T | null | undefined {
    const got = this.present(key, options);
    if ('result' in got) return got.result;
    const { value } = got;
    if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
    const shown = typeof value === 'string' ? value : JSON.stringify(value);
    switch (options.style ?? 'drf') {
      case 'expect':
        this.add(key, `Expect one of ${choices.join(', ')}.`);
        break;
      case 'choose':
        this.add(key, `"${shown}" is not a valid choice. Choose one of ${choices.join(', ')}.`);
        break;
      default:
        this.add(key, `"${shown}" is not a valid choice.`);
    }
    return undefined;
  }

  /** A UUID naming an object of `objects`: DRF's "Must be a valid UUID." / "… does not exist." */
  reference<T>(key: string, objects: ReadonlyMap<string, T>, options: FieldOptions = {}): T | null | undefined {
    const got = this.present(key, options);
    if ('result' in got) return got.result;
    const message = referenceProblem(got.value, objects);
    if (message !== undefined) {
      this.add(key, message);
      return undefined;
    }
    return objects.get((got.value as string).toLowerCase());
  }

  ipAddress(key: string, options: FieldOptions = {}): IpAddress | null | undefined {
    const got = this.present(key, options);
    if ('result' in got) return got.result;
    const ip = typeof got.value === 'string' ? parseIp(got.value) : undefined;
    if (ip === undefined) this.add(key, 'Enter a valid IPv4 or IPv6 address.');
    return ip;
  }

  tags(key = 'tags'): Tags | undefined {
    const got = this.present(key, {});
    if ('result' in got) return undefined;
    const { value } = got;
    if (!isDict(value)) {
      this.add(key, `Expected a dictionary of items but got type "${pythonTypeName(value)}".`);
      return undefined;
    }
    const tags: Tags = {};
    for (const [tagKey, tagValue] of Object.entries(value)) {
      if (typeof tagValue !== 'string') {
        this.add(key, `Tag ${tagKey}: Not a valid string.`);
        return undefined;
      }
      tags[tagKey] = tagValue;
    }
    return tags;
  }

  /** A list of CIDR networks; a bare address is rejected, as by the real API. */
  cidrList(key: string, options: FieldOptions = {}): string[] | undefined {
    const list = this.list(key, options);
    if (list === undefined) return undefined;
    const problems: Record<string, string> = {};
    list.forEach((entry, index) => {
      if (typeof entry !== 'string' || parseCidr(entry) === undefined) {
        problems[index] = 'Enter a valid network address in CIDR notation.';
      }
    });
    if (Object.keys(problems).length > 0) {
      this.errors[key] = problems;
      return undefined;
    }
    return list as string[];
  }

  stringList(key: string, options: FieldOptions = {}): string[] | undefined {
    const list = this.list(key, options);
    if (list === undefined) return undefined;
    if (list.some((entry) => typeof entry !== 'string')) {
      this.add(key, 'Not a valid string.');
      return undefined;
    }
    return list as string[];
  }

  list(key: string, options: FieldOptions = {}): unknown[] | undefined {
    const got = this.present(key, options);
    if ('result' in got) return undefined;
    if (!Array.isArray(got.value)) {
      this.add(key, `Expected a list of items but got type "${pythonTypeName(got.value)}".`);
      return undefined;
    }
    return got.value;
  }

  /** Fields that may not change after creation: a 400 naming each one sent. */
  immutable(keys: readonly string[]): void {
    for (const key of keys) if (this.has(key)) this.add(key, 'This field cannot be changed after creation.');
  }
}

export function referenceProblem(value: unknown, objects: ReadonlyMap<string, unknown>): string | undefined {
  if (typeof value !== 'string' || !UUID_PATTERN.test(value)) return 'Must be a valid UUID.';
  if (!objects.has(value.toLowerCase())) return `Object with uuid=${value} does not exist.`;
  return undefined;
}

function pythonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'bool';
  if (value === null) return 'NoneType';
  return 'dict';
}
