// Each shell completion script against the CLI's own definition (programDefinition() of
// src/cli.ts), so that a subcommand or flag added to the CLI fails here until all three scripts
// know it: every visible subcommand with a description, every option of every subcommand and the
// global ones, the fixed values of options and arguments (-o: markdown only for plan), and file
// names exactly where a value is a file (`<file>`, `<path>`). bash and fish are asked as the
// shell asks them (bash: COMP_WORDS and the registered function; fish: `complete -C`); for zsh,
// whose completion needs a terminal, _arguments and _describe are replaced by functions printing
// the specs the script hands them. No cluster: the `cloudscale-ccm` on PATH knows no names.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { afterAll, describe, expect, test } from 'vitest';
import { completionScriptPath } from '../../src/commands/completion.js';
import { outputFormatsOf, programDefinition } from '../../src/cli.js';

const program = programDefinition();
const help = program.createHelp();
const subcommands = help.visibleCommands(program);
/** `help` is commander's: it takes a subcommand's name and has no options of its own. */
const commandsWithOptions = subcommands.filter((command) => command.name() !== 'help');

/**
 * What the line `cloudscale-ccm [COMMAND]` accepts: the command's options and the program's.
 * --version, which commander accepts anywhere, a script need offer before a subcommand only.
 */
function optionsOf(command: Command | undefined): Option[] {
  const own = command === undefined ? [] : help.visibleOptions(command);
  const global = help.visibleOptions(program).filter((option) => command === undefined || (option.long !== '--help' && option.long !== '--version'));
  return [...own, ...global];
}
const takesValue = (option: Option) => option.required || option.optional;
const isFileValue = (flags: string) => /<(file|path)>/.test(flags);
/** The values a script should offer for an option's value, if they are fixed. */
function choicesOf(option: Option, command: Command | undefined): string[] | undefined {
  if (option.long === '--output') return outputFormatsOf(command?.name());
  return option.argChoices;
}
const longOptionsOf = (command: Command | undefined) => new Set(optionsOf(command).map((option) => option.long as string));
/** The long options a script offers, --version left out after a subcommand (see optionsOf). */
const offered = (command: Command | undefined, flags: readonly string[]) =>
  new Set(flags.filter((flag) => command === undefined || flag !== '--version'));
/** Candidates as a set: fish sorts them, bash keeps the script's order. */
const sorted = (values: readonly string[] | undefined) => (values === undefined ? undefined : [...values].sort());

// A directory with a saved plan in it: completing `plans/` shows whether file names are offered.
const scratch = mkdtempSync(join(tmpdir(), 'ccm-completion-sync-'));
mkdirSync(join(scratch, 'plans'));
writeFileSync(join(scratch, 'plans', 'web.plan.json'), '{}');
const PLAN_FILE = 'plans/web.plan.json';
mkdirSync(join(scratch, 'bin'));
writeFileSync(join(scratch, 'bin', 'cloudscale-ccm'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function runShell(shell: string, args: readonly string[]): string {
  const result = spawnSync(shell, args, {
    cwd: scratch,
    encoding: 'utf8',
    env: { PATH: `${join(scratch, 'bin')}:/usr/bin:/bin`, HOME: scratch },
  });
  expect(result.stderr, `${shell} ${args.join(' ')}`).toBe('');
  expect(result.status).toBe(0);
  return result.stdout;
}

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** bash: COMPREPLY for the line `words` (the last word is the one being completed). */
function bash(words: readonly string[]): string[] {
  const script = [
    `source ${quote(completionScriptPath('bash'))}`,
    `COMP_WORDS=(${words.map(quote).join(' ')}); COMP_CWORD=${words.length - 1}`,
    `_cloudscale_ccm; printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('\n');
  return runShell('bash', ['--norc', '--noprofile', '-c', script]).split('\n').filter((line) => line !== '');
}

/** fish: the candidates of `complete -C LINE`, each as [candidate, description]. */
function fish(line: string): [string, string][] {
  const script = `source ${quote(completionScriptPath('fish'))}; complete -C ${quote(line)}`;
  return runShell('fish', ['--no-config', '-c', script])
    .split('\n')
    .filter((output) => output !== '')
    .map((output) => output.split('\t') as [string, string]);
}
const fishCandidates = (line: string) => fish(line).map(([candidate]) => candidate);

/**
 * zsh: the specs the script passes to _arguments for `cloudscale-ccm COMMAND …` (the global ones
 * when no command is given), or the `name:description` entries it passes to _describe for the
 * subcommands.
 */
function zsh(request: { command?: string } | 'subcommands'): string[] {
  const call =
    request === 'subcommands'
      ? '_cloudscale_ccm_commands'
      : `words=(cloudscale-ccm ${request.command === undefined ? '' : quote(request.command)} ''); CURRENT=\${#words}; _cloudscale_ccm`;
  const script = [
    'compdef() { : }',
    `source ${quote(completionScriptPath('zsh'))}`,
    '_describe() { print -rl -- "${(@P)4}" }',
    // The first call names the subcommand's state: stand in for it as _arguments would.
    '_arguments() {',
    `  if (( \${#words} > 2 )) && [[ \${@[-1]} == '*:: :->command' ]]; then state=command; words=("\${(@)words[2,-1]}"); return 0; fi`,
    '  print -rl -- "$@"',
    '}',
    call,
  ].join('\n');
  return runShell('zsh', ['-f', '-c', script]).split('\n').filter((line) => line !== '');
}

interface ZshSpec {
  /** The option, or the position of an argument (`1`, `*`). */
  name: string;
  description?: string;
  /** What completes the value: `(a b c)`, `_files`, a function, or '' for anything. */
  action?: string;
}

/** `(-o --output)--output=[output format]:format:(text json yaml)` and `1:shell:(bash zsh fish)`. */
function parseZshSpec(spec: string): ZshSpec | undefined {
  const option = spec.match(/^(?:\([^)]*\))?\*?(--?[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)[-+=]?=?(?:\[((?:\\.|[^\]\\])*)\])?(?::(?:\\.|[^:\\])*:(.*))?$/);
  if (option !== null) {
    return { name: option[1] as string, ...(option[2] === undefined ? {} : { description: option[2] }), ...(option[3] === undefined ? {} : { action: option[3] }) };
  }
  const argument = spec.match(/^(\d+|\*):{1,2}[^:]*:(.*)$/);
  return argument === null ? undefined : { name: argument[1] as string, action: argument[2] as string };
}
const zshSpecs = (command?: string) =>
  zsh(command === undefined ? {} : { command })
    // -C is an option of _arguments itself, not a spec.
    .filter((spec) => spec !== '-C')
    .map(parseZshSpec).filter((spec): spec is ZshSpec => spec !== undefined);
const choicesOfAction = (action: string | undefined) => action?.match(/^\((.*)\)$/)?.[1]?.split(' ');

const lineOf = (command: Command | undefined, ...words: string[]) =>
  ['cloudscale-ccm', ...(command === undefined ? [] : [command.name()]), ...words];

describe('subcommands', () => {
  const names = subcommands.map((command) => command.name());

  test('bash offers every visible subcommand', () => {
    expect(new Set(bash(['cloudscale-ccm', '']))).toEqual(new Set(names));
    expect(new Set(bash(['cloudscale-ccm', 'help', '']))).toEqual(new Set(names));
  });

  test('zsh offers every visible subcommand, each with a description', () => {
    const entries = zsh('subcommands').map((entry) => entry.split(/:(.*)/s) as [string, string]);
    expect(new Set(entries.map(([name]) => name))).toEqual(new Set(names));
    for (const [name, description] of entries) expect(description, name).toMatch(/\S/);
  });

  test('fish offers every visible subcommand, each with a description', () => {
    const entries = fish('cloudscale-ccm ');
    expect(new Set(entries.map(([name]) => name))).toEqual(new Set(names));
    for (const [name, description] of entries) expect(description, name).toMatch(/\S/);
    expect(new Set(fishCandidates('cloudscale-ccm help '))).toEqual(new Set(names.filter((name) => name !== 'help')));
  });
});

// Before any subcommand (undefined) and after each one.
const positions: [string, Command | undefined][] = [['(no subcommand)', undefined], ...commandsWithOptions.map((command) => [command.name(), command] as [string, Command])];

describe.each(positions)('options: %s', (_name, command) => {
  const expected = longOptionsOf(command);
  const expectedShort = new Set(optionsOf(command).flatMap((option) => (option.short === undefined ? [] : [option.short])));
  const shortOf = (flags: readonly string[]) => new Set(flags.filter((flag) => /^-[a-zA-Z]$/.test(flag)));

  test('bash', () => {
    expect(offered(command, bash([...lineOf(command), '--']))).toEqual(expected);
    expect(shortOf(bash([...lineOf(command), '-']))).toEqual(expectedShort);
  });

  test('zsh, each with a description', () => {
    const specs = zshSpecs(command?.name()).filter((spec) => spec.name.startsWith('-'));
    const long = specs.filter((spec) => spec.name.startsWith('--'));
    expect(offered(command, long.map((spec) => spec.name))).toEqual(expected);
    expect(shortOf(specs.map((spec) => spec.name))).toEqual(expectedShort);
    for (const spec of specs) expect(spec.description, spec.name).toMatch(/\S/);
  });

  test('fish, each with a description', () => {
    const entries = fish(`${lineOf(command).join(' ')} --`);
    expect(offered(command, entries.map(([flag]) => flag))).toEqual(expected);
    for (const [flag, description] of entries) expect(description, flag).toMatch(/\S/);
    expect(shortOf(fishCandidates(`${lineOf(command).join(' ')} -`))).toEqual(expectedShort);
  });
});

describe.each(positions)('option values: %s', (_name, command) => {
  const valueOptions = optionsOf(command).filter(takesValue);

  test('bash knows which options take the next word as their value', () => {
    const valueFlags = runShell('bash', ['--norc', '--noprofile', '-c', `source ${quote(completionScriptPath('bash'))}; echo "$_cloudscale_ccm_value_flags"`]);
    const known = new Set(valueFlags.trim().split(/\s+/));
    for (const option of valueOptions) {
      for (const flag of [option.short, option.long]) if (flag !== undefined) expect(known, flag).toContain(flag);
    }
  });

  test('zsh: a value where the CLI takes one, its fixed values, files where it is a file', () => {
    const specs = new Map(zshSpecs(command?.name()).map((spec) => [spec.name, spec]));
    for (const option of optionsOf(command)) {
      const spec = specs.get(option.long as string);
      expect(spec, option.long).toBeDefined();
      expect(spec?.action !== undefined, `${option.long} takes a value`).toBe(takesValue(option));
      if (!takesValue(option)) continue;
      expect(sorted(choicesOfAction(spec?.action)), option.long).toEqual(sorted(choicesOf(option, command)));
      expect(spec?.action?.includes('_files'), `${option.long} completes files`).toBe(isFileValue(option.flags));
      // Nothing else is run on a Tab (a ':' left unescaped in the message makes the rest the action).
      expect(spec?.action, option.long).toMatch(/^(|\(.*\)|_files.*|_hosts|_cloudscale_ccm_[a-z_]+)$/);
    }
  });

  test.each(['bash', 'fish'])('%s: fixed values, and files exactly where the value is a file', (shell) => {
    const complete = (words: string[]) => (shell === 'bash' ? bash(words) : fishCandidates(words.join(' ')));
    for (const option of valueOptions) {
      const choices = choicesOf(option, command);
      if (choices !== undefined) expect(sorted(complete([...lineOf(command), option.long as string, ''])), option.long).toEqual(sorted(choices));
      const files = complete([...lineOf(command), option.long as string, 'plans/']);
      expect(files, option.long).toEqual(isFileValue(option.flags) ? [PLAN_FILE] : []);
    }
  });
});

describe.each(commandsWithOptions.filter((command) => command.registeredArguments.length > 0).map((command) => [command.name(), command] as const))(
  'arguments: %s',
  (_name, command) => {
    const [first] = command.registeredArguments;
    const expectedChoices = first?.argChoices;
    const isFile = first !== undefined && isFileValue(`<${first.name()}>`);

    test('bash and fish: its fixed values, files exactly where it is a file', () => {
      for (const complete of [bash, (words: string[]) => fishCandidates(words.join(' '))]) {
        if (expectedChoices !== undefined) expect(sorted(complete(lineOf(command, '')))).toEqual(sorted(expectedChoices));
        if (isFile) expect(complete(lineOf(command, 'plans/'))).toEqual([PLAN_FILE]);
        else expect(complete(lineOf(command, 'plans/'))).not.toContain(PLAN_FILE);
      }
    });

    test('zsh: its fixed values, files exactly where it is a file', () => {
      const spec = zshSpecs(command.name()).find((candidate) => candidate.name === '1' || candidate.name === '*');
      expect(spec).toBeDefined();
      expect(sorted(choicesOfAction(spec?.action))).toEqual(sorted(expectedChoices));
      expect(spec?.action?.includes('_files')).toBe(isFile);
    });
  },
);
