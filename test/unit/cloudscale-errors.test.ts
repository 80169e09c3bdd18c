import { describe, expect, test } from 'vitest';
import { CloudscaleApiError, CloudscaleUnavailableError } from '../../src/core/errors.js';
import {
  CloudscaleNoAnswerError,
  CloudscaleRequestError,
  fieldMessages,
  isOutcomeUnknown,
  normaliseErrorBody,
} from '../../src/core/cloudscale/errors.js';

describe('normaliseErrorBody', () => {
  test.each([
    { name: 'no body', body: undefined, expected: undefined },
    { name: 'empty text', body: '  ', expected: undefined },
    { name: 'DRF detail as text', body: '{"detail": "Not found."}', expected: { detail: 'Not found.' } },
    {
      name: 'field lists as text',
      body: '{"protocol_port": ["The protocol_port must be between 1 and 65535."]}',
      expected: { protocol_port: ['The protocol_port must be between 1 and 65535.'] },
    },
    {
      name: 'one string per field as text (the real API, the SDK)',
      body: '{"flavor": "\\"flex-3-3\\" is not a valid choice."}',
      expected: { flavor: '"flex-3-3" is not a valid choice.' },
    },
    { name: 'already parsed', body: { detail: 'x' }, expected: { detail: 'x' } },
    { name: 'a bare list', body: '["First.", "Second."]', expected: { detail: 'First. Second.' } },
    { name: 'an empty list', body: '[]', expected: undefined },
    { name: 'a list of objects', body: [{ a: 1 }], expected: { detail: '{"a":1}' } },
    { name: 'HTML from a proxy', body: '<html>502 Bad Gateway</html>', expected: '<html>502 Bad Gateway</html>' },
    { name: 'a JSON string', body: '"Server error."', expected: 'Server error.' },
    { name: 'JSON null', body: 'null', expected: undefined },
    { name: 'a number', body: '42', expected: '42' },
  ])('$name', ({ body, expected }) => {
    expect(normaliseErrorBody(body)).toEqual(expected);
  });
});

describe('CloudscaleRequestError', () => {
  const make = (status: number, body: unknown, outcomeUnknown = false) =>
    new CloudscaleRequestError({
      status,
      method: 'POST',
      path: '/v1/load-balancers/listeners',
      body,
      attempts: 1,
      outcomeUnknown,
    });

  test('keeps detail and per-field lists and says both in the message', () => {
    const error = make(400, '{"allowed_cidrs": ["Enter a valid network address in CIDR notation."]}');
    expect(error).toBeInstanceOf(CloudscaleApiError);
    expect(error.detail).toBeUndefined();
    expect(error.fieldErrors).toEqual({
      allowed_cidrs: ['Enter a valid network address in CIDR notation.'],
    });
    expect(error.message).toBe(
      'cloudscale API POST /v1/load-balancers/listeners answered 400: ' +
        'allowed_cidrs: Enter a valid network address in CIDR notation.',
    );
    expect(error.isNotFound).toBe(false);
  });

  test('one string per field (the real API): the message names the field', () => {
    const error = make(400, '{"protocol_port": "The protocol_port must be between 1 and 65535."}');
    expect(error.fieldErrors).toEqual({ protocol_port: 'The protocol_port must be between 1 and 65535.' });
    expect(error.message).toBe(
      'cloudscale API POST /v1/load-balancers/listeners answered 400: ' +
        'protocol_port: The protocol_port must be between 1 and 65535.',
    );
  });

  test('404 is not-found and keeps the detail', () => {
    const error = make(404, '{"detail": "Not found."}');
    expect(error.isNotFound).toBe(true);
    expect(error.detail).toBe('Not found.');
    expect(error.hint).toMatch(/CLOUDSCALE_API_URL/);
  });

  test.each([
    { status: 401, outcomeUnknown: false, hint: /CLOUDSCALE_API_TOKEN/ },
    { status: 403, outcomeUnknown: false, hint: /read\/write/ },
    { status: 429, outcomeUnknown: false, hint: /try again later/ },
    { status: 400, outcomeUnknown: false, hint: /refused the request as sent/ },
    { status: 409, outcomeUnknown: false, hint: /refused the request as sent/ },
    { status: 500, outcomeUnknown: true, hint: /may or may not have been created/ },
  ])('hint for $status (outcomeUnknown $outcomeUnknown)', ({ status, outcomeUnknown, hint }) => {
    const error = make(status, undefined, outcomeUnknown);
    expect(error.hint).toMatch(hint);
    expect(isOutcomeUnknown(error)).toBe(outcomeUnknown);
  });

  test('a body without detail or fields still gives a message', () => {
    expect(make(500, undefined).message).toBe(
      'cloudscale API POST /v1/load-balancers/listeners answered 500: no error detail',
    );
  });
});

describe('CloudscaleNoAnswerError', () => {
  test('names method, path and attempts; is a CloudscaleUnavailableError', () => {
    const error = new CloudscaleNoAnswerError({
      method: 'GET',
      path: '/v1/servers',
      reason: 'no answer within 20 s',
      attempts: 5,
      outcomeUnknown: false,
      baseUrl: 'http://127.0.0.1:1',
    });
    expect(error).toBeInstanceOf(CloudscaleUnavailableError);
    expect(error.message).toBe('cloudscale API GET /v1/servers: no answer within 20 s (5 attempts)');
    expect(error.hint).toMatch(/http:\/\/127\.0\.0\.1:1 is reachable/);
    expect(isOutcomeUnknown(error)).toBe(false);
  });
});

test('isOutcomeUnknown is false for anything else', () => {
  expect(isOutcomeUnknown(new Error('x'))).toBe(false);
  expect(isOutcomeUnknown(undefined)).toBe(false);
});

describe('fieldMessages', () => {
  test.each([
    { name: 'flat lists', errors: { name: ['Too long.', 'Bad.'] }, expected: [
      { field: 'name', message: 'Too long.' },
      { field: 'name', message: 'Bad.' },
    ] },
    { name: 'a plain string', errors: { pool: 'Required.' }, expected: [{ field: 'pool', message: 'Required.' }] },
    {
      name: 'nested list of objects (DRF many=True)',
      errors: { vip_addresses: [{}, { subnet: ['Must be a valid UUID.'] }] },
      expected: [{ field: 'vip_addresses[1].subnet', message: 'Must be a valid UUID.' }],
    },
    {
      name: 'nested object',
      errors: { http: { host: ['The host argument can not be used with HTTP version 1.0'] } },
      expected: [
        { field: 'http.host', message: 'The host argument can not be used with HTTP version 1.0' },
      ],
    },
    { name: 'nothing', errors: {}, expected: [] },
  ])('$name', ({ errors, expected }) => {
    expect(fieldMessages(errors)).toEqual(expected);
  });
});
