// The admission policy generator: what it covers, the committed chart template, the messages.
// Whether the CEL decides as the parser does runs on a real kube-apiserver:
// test/integration/kube-admission-policy.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import {
  ADMISSION_POLICY_NAME,
  ADMISSION_RULES,
  admissionMessage,
  buildAdmissionPolicy,
  toolOnlyAnnotations,
} from '../../src/core/deploy/admission-policy.js';
import { buildManifests, CHART_ADMISSION_TEMPLATE, renderAdmissionPolicyChartTemplate } from '../../src/core/deploy/manifests.js';
import { AnnotationError } from '../../src/core/errors.js';
import { LB_ANNOTATIONS, readLbAnnotation, type LbAnnotationName } from '../../src/core/lb/annotations.js';
import { quoteUntrusted } from '../../src/core/text/untrusted.js';

interface PolicySpec {
  variables: { name: string; expression: string }[];
  validations: { expression: string; messageExpression: string }[];
}
const spec = buildAdmissionPolicy({}).spec as PolicySpec;

describe('what the policy checks', () => {
  test('every annotation with a rule that refuses some value has one validation; the others are listed as only the tool’s', () => {
    const checked = (Object.keys(ADMISSION_RULES) as LbAnnotationName[]).filter((name) => !['any', 'tool-only'].includes(ADMISSION_RULES[name].kind));
    expect(spec.validations.map((v) => v.expression)).toEqual(checked.map((name) => `variables.${name} == ""`));
    expect(toolOnlyAnnotations().map((a) => a.key)).toEqual([
      LB_ANNOTATIONS.vipAddresses.key,
      LB_ANNOTATIONS.floatingIps.key,
      LB_ANNOTATIONS.healthMonitorHttp.key,
      LB_ANNOTATIONS.listenerAllowedCidrs.key,
      LB_ANNOTATIONS.listenerAllowedSubnets.key,
      LB_ANNOTATIONS.nodeSelector.key,
    ]);
  });

  test('an annotation the policy does not check is one the tool accepts with any value, or one named with its reason', () => {
    for (const name of Object.keys(ADMISSION_RULES) as LbAnnotationName[]) {
      if (ADMISSION_RULES[name].kind !== 'any') continue;
      for (const raw of ['', 'x', ' {[ ', '\u0000']) expect(() => readLbAnnotation({ [LB_ANNOTATIONS[name].key]: raw }, name)).not.toThrow();
    }
  });

  test('each message names the annotation and its format, as the tool’s does', () => {
    for (const name of Object.keys(ADMISSION_RULES) as LbAnnotationName[]) {
      const validation = spec.validations.find((v) => v.expression === `variables.${name} == ""`);
      if (validation === undefined) continue;
      const { key, format } = LB_ANNOTATIONS[name];
      expect(validation.messageExpression).toContain(JSON.stringify(`${key}: `));
      expect(validation.messageExpression).toContain(JSON.stringify(`; expected ${format}`));
    }
  });
});

describe('admissionMessage', () => {
  test('is the tool’s message without the quoted value', () => {
    const raw = 'abc';
    let error: unknown;
    try {
      readLbAnnotation({ [LB_ANNOTATIONS.healthMonitorDelayS.key]: raw }, 'healthMonitorDelayS');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AnnotationError);
    const { key, format } = LB_ANNOTATIONS.healthMonitorDelayS;
    expect((error as AnnotationError).message.replace(` invalid value ${quoteUntrusted(raw)}:`, '')).toBe(
      admissionMessage(key, 'not an integer', format),
    );
  });
});

describe('manifests', () => {
  const kinds = (mode: 'deny' | 'warn' | 'none') =>
    buildManifests({ version: '0.1.0', schedule: '* * * * *', admissionPolicy: mode }).map((m) => m.object.kind);

  test.each([
    ['deny', ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']],
    ['warn', ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']],
    ['none', []],
  ] as const)('--admission-policy %s adds %j', (mode, added) => {
    expect(kinds(mode).slice(7)).toEqual(added);
  });

  test('the binding denies by default, warns with warn', () => {
    const bindingOf = (mode?: 'warn') =>
      buildManifests({ version: '0.1.0', schedule: '* * * * *', ...(mode === undefined ? {} : { admissionPolicy: mode }) }).find(
        (m) => m.object.kind === 'ValidatingAdmissionPolicyBinding',
      )!.object as { spec: { policyName: string; validationActions: string[] } };
    expect(bindingOf().spec).toEqual({ policyName: ADMISSION_POLICY_NAME, validationActions: ['Deny'] });
    expect(bindingOf('warn').spec.validationActions).toEqual(['Warn']);
  });
});

test(`${CHART_ADMISSION_TEMPLATE} is the generated template (UPDATE_DEPLOY=1 rewrites it)`, () => {
  const path = fileURLToPath(new URL(`../../${CHART_ADMISSION_TEMPLATE}`, import.meta.url));
  const generated = renderAdmissionPolicyChartTemplate();
  if (process.env.UPDATE_DEPLOY === '1') writeFileSync(path, generated);
  expect(readFileSync(path, 'utf8')).toBe(generated);
});
