// Regenerates the README sections that are derived from code (run `npm run docs` after `npm run build`).
import { readFileSync, writeFileSync } from 'node:fs';
import { renderAnnotationReference } from '../dist/core/lb/annotations.js';
import { replaceGeneratedSection } from '../dist/core/render/readme.js';

const path = new URL('../README.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = replaceGeneratedSection(before, 'annotation-reference', renderAnnotationReference());
if (after !== before) writeFileSync(path, after);
process.stdout.write(after === before ? 'README.md is up to date\n' : 'README.md updated\n');
