/**
 * The ALONE rule on set 17's fresh real comments (`heldout-17-comments.json`, tuning data): a
 * comment that stands alone where code was removed is read as a stand-in for it only when it is not,
 * by its shape, prose about the code: a doc comment (Lua's `---`), a line that goes on with a
 * sentence begun on the line before (a comma or a verb opens it, a bracket closes that it never
 * opened, a full stop ends a lower-case sentence of five words or more), a present-tense verb that
 * opens what the code does, a parameter's or a field's description, a person explaining, a
 * quoted phrase or a snake_case name with no dots around. Each rule has cases taken from set 17
 * and cases no set holds (the held-out style), and the placeholders it must still take.
 */
import { describe, expect, it } from 'vitest';
import { findElisions } from '../../src/core/elision.js';

const code = (i: number) => `    total_${i} = weigh(value_${i}, ${i});`;
const file = (n: number) => Array.from({ length: n }, (_, i) => code(i));

/** `line` alone in place of 20 lines of code from line 10 of a 40-line file: flagged? */
function alone(line: string): boolean {
  const old = file(40);
  const neu = [...old.slice(0, 10), line, ...old.slice(30)];
  return findElisions(neu.join('\n'), old.join('\n')).length > 0;
}

describe('the ALONE rule leaves prose about the code (set 17)', () => {
  it.each([
    // set 17: Lua doc comments
    '    ---@field is_same LuassertFunctionTwoArgs',
    '    ---Same as run but runs multiple futures',
    '    --- predicate returned a truthy value, and the second holds the rest. For',
    // set 17: a sentence going on from the line before
    '    # to look the same as ordinary variables.',
    '    // is returned unchanged.',
    '    # cases, and look like a memory leak in others.',
    '    -- ,   vertically and there is more space on the other side',
    '    // entirely for preview and other child commands).',
    '    // lane holds bit 6 of that same lane.',
    '    # the correct parameters to reproduce the previous request.',
    // set 17: what the code does, a parameter, a field, a person, a quotation, a name
    '    # Deletes all old elements.',
    '    -- strFilePath - The existing result file.',
    '    # Prevented attack::   DNS rebinding and other Host header attacks',
    '    # issued by the same CA as our Server certificate',
    '    // the same silent "no results" footgun.',
    '    # After is_stream filtering, remaining data is raw (not streamed)',
    // no set holds these: the same shapes, other words
    '    ---@param rest string[] the remaining arguments',
    '    --- Returns the other half of the pair',
    '    // are kept in the same order as the input.',
    '    # was left unchanged by the previous pass.',
    '    // ; the rest is ignored',
    '    // with the other keys left as the caller passed them).',
    '    # entries of the old table are copied over unchanged.',
    '    // Clears all other flags on the socket.',
    '    # userId - The original owner of the record.',
    '    // Default value::  same as the parent',
    '    // we keep the rest in memory',
    '    # the "same origin" check',
    '    // retry_count stays the same',
  ])('%s', (line) => {
    expect(alone(line)).toBe(false);
  });
});

describe('the ALONE rule still takes what it exists for', () => {
  it.each([
    '    // rest of file unchanged.',
    '    // the rest.',
    '    // unchanged.',
    '    # etc.',
    '    // and the rest of the methods',
    '    // and so on for the remaining fields',
    '    # keep the remaining config',
    '    // Same as above for the PUT handler',
    '    // other endpoints omitted',
    '    <!-- other rows unchanged -->',
    '    -- rest unchanged',
    '    -- ---- cut ----',
    '    // ... other routes ...',
    '    # ... remainder of run_cognitive_layer ...',
    '    // constructor, getters, setters...',
    '    // omitted, unchanged',
    '    // Existing handlers',
    '    # Same for the other columns',
    '    -- (Resto del contenido de insumos_basicos_chile.sql se mantiene igual)',
    // a description of more than one sentence, a later one saying the body is left out
    '    # Parses the config. Rest omitted.',
  ])('%s', (line) => {
    expect(alone(line)).toBe(true);
  });
});
