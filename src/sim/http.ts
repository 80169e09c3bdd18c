// HTTP plumbing the simulator's API and admin endpoints share: reading a body, parsing JSON and
// query strings as the real API's framework (Django REST framework) does, and sending answers.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDict, type Dict } from './fields.js';

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A JSON object body (an empty body is `{}`), or the 400 body DRF answers for anything else. */
export function parseJsonBody(text: string): { body: Dict } | { error: unknown } {
  if (text.trim() === '') return { body: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: { detail: `JSON parse error - ${(error as Error).message}` } };
  }
  if (!isDict(value)) {
    const kind = Array.isArray(value) ? 'list' : value === null ? 'NoneType' : typeof value;
    return { error: { non_field_errors: `Invalid data. Expected a dictionary, but got ${kind}.` } };
  }
  return { body: value };
}

/** `tag%3Aenv=prod&tag:team` → [['tag:env', 'prod'], ['tag:team', undefined]]; `+` is a space. */
export function parseQuery(raw: string): [string, string | undefined][] {
  if (raw === '') return [];
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text.replaceAll('+', ' '));
    } catch {
      return text;
    }
  };
  return raw
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=');
      return equals < 0 ? [decode(part), undefined] : [decode(part.slice(0, equals)), decode(part.slice(equals + 1))];
    });
}

/** The first value of query parameter `name`. */
export function queryValue(rawQuery: string, name: string): string | undefined {
  return parseQuery(rawQuery).find(([key]) => key === name)?.[1];
}

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'Content-Type, Authorization',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS, PUT, PATCH, DELETE',
};

/** Answers `status` with `body` as JSON (none for 204 or an absent body), open to any origin. */
export function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (status === 204 || body === undefined) {
    res.writeHead(status, { ...CORS_HEADERS, ...headers });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...CORS_HEADERS,
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}
