/**
 * Placeholders, the round before set 17 (issue 20 item 6, branch elision6): sets 14 and 16 were
 * measured once on the merged rules of the round before and are tuning data since; set 16's 26
 * misses, grouped by mechanism, gave the rules below. Each is tried on variants this round's
 * engineer wrote (other languages' syntaxes, other verbs), not on set 16's strings, and with what it
 * must not take. Set 17 (heldout-17*) is held out: nothing here reads it.
 *
 * - an ellipsis that stands for code in a line of code: a body, a statement, a value, an SQL clause;
 * - a comment after only brackets, dots, bars or markup reads as the line's own comment;
 * - a whole line in square brackets that says the code is left out;
 * - "the rest of the code" and what it is for; the others that would be written alike;
 * - "left out" said as a predicate: in a later sentence, or in a stub's message;
 * - the whole code elsewhere, named by a path; hedges ("if any") are no condition; a remark in
 *   brackets closed by a colon.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { elisionFigures, findElisions } from '../../src/core/elision.js';
import { elisionCorpus, elisionProbe } from '../elision-probe.js';

const { code, file, replacing, addedOnly, onlyAlone, never } = elisionProbe('');
const corpus = elisionCorpus;

describe('placeholders: an ellipsis that stands for code in a line of code', () => {
  it('a body that holds only the ellipsis, in any brace language', () => {
    onlyAlone([
      '    public void save(User u) { ... }',
      '    fn parse(&self) -> Result<Ast> { ... }',
      '    func (s *Server) Start() error { ... }',
      '    override fun onCreate(savedInstanceState: Bundle?) { … }',
      '    private async Task LoadAsync() { ... }',
      '    componentDidMount() { ... },',
      '    handleClick = () => { ... };',
      '    else { ... }',
      '    options: { ... },',
      '    "scripts": { ... },',
    ]);
  });

  it('a statement between statements, a value before the end, a key whose value is the ellipsis, an SQL clause trailing off', () => {
    onlyAlone([
      '    setUp(); ... tearDown();',
      '    render() { const a = 1; ... }',
      '    config = { debug: true, retries: ..., timeout: 30 };',
      '    headers: ...,',
      '    onSuccess: ...',
      '    "dependencies": ...',
      '    return ...;',
      '    x = [1, 2, 3, ...]',
      '    <li>{{ ... }}</li>',
      '    {% ... %}',
      '    <p><%= ... %></p>',
      '    const msg = `Hello ${...}`;',
      '    <td>...</td>',
      '    <div class="card">…</div>',
      '    UPDATE users SET ... WHERE id = 1 AND ...',
      '    INSERT INTO users (id, name) VALUES (...);',
      '    cursor.execute("INSERT INTO logs (a, b) VALUES ...")',
      "    db.query('select id, name from users where ...')",
    ]);
  });

  it("not code's own ellipses: spreads, rests, varargs, Lua's varargs, Python's Ellipsis, MATLAB's continuation, ranges, folds", () => {
    never([
      '    local args = {...}',
      '    local a, b = ...',
      '    return {...}',
      "    print(select('#', ...))",
      '    local t = { ... }',
      '    f({...})',
      '    def area(self) -> float: ...',
      '    class Shape(Protocol): ...',
      '    def f(x: int = ..., y: str = ...) -> None: ...',
      '    X: int = ...',
      '    else: ...',
      '    x = arr[..., 0]',
      '    def f(xs: Tuple[int, ...]) -> Callable[..., int]: ...',
      '    A = [1 2 3; ...',
      '    total = a + b + ...',
      '    int printf(const char *fmt, ...);',
      '    template<typename... Args> void log(Args... args) { (std::cout << ... << args); }',
      '    func sum(nums ...int) int {',
      '    all = append(all, more...)',
      '    public static void main(String... args) {',
      '    for i in 0...n {',
      '    const merged = { ...defaults, ...opts };',
      '    const [first, ...rest] = list;',
      '    return fn(...args);',
      '    <Component {...props} />',
      '    $args = [...$a, ...$b];',
      '    from ... import models',
      '    log.info("Loading ...");',
      '    return nil, fmt.Errorf("SELECT ... FROM failed: %s", err)',
      '    def f() -> tuple[int, ...]: ...',
      '    y = np.zeros((3, 3))[..., 0]',
      '    local first = (...)',
      "    return s.length > 200 ? s.slice(0, 200) + ' [...]' : s;",
    ]);
  });

  it('by the ALONE rule: where it and at most one new line of code for four lost stand in place of five or more; not in a refactor, not where nothing was removed, not a line the old text had', () => {
    expect(replacing(['    getUser() { ... }', '    x = 1'], 20)).toBe(true);
    expect(replacing(['    getUser() { ... }', '    x = 1', '    y = 2'], 6)).toBe(false);
    expect(replacing('    getUser() { ... }', 4)).toBe(false);
    expect(addedOnly('    getUser() { ... }')).toBe(false);
    const old = [...file(10), '    getUser() { ... }', ...file(30)];
    const neu = [...file(10), '    getUser() { ... }', ...file(30).slice(20)];
    expect(findElisions(neu.join('\n'), old.join('\n'))).toEqual([]);
  });
});

describe('placeholders: a comment after only brackets, dots, bars or markup is the line', () => {
  it('reads as a comment line of its own, in any script', () => {
    onlyAlone([
      '    }, // rest unchanged',
      '    ); // 其余不变',
      '    ] # остальное без изменений',
      '    </div> <!-- rest of the page unchanged -->',
      '    <td>...</td> <!-- 省略 -->',
      '    ... # el resto igual',
      '    | ... | ... |  # 略去中间的行',
      '    <span class="c">// 以下省略</span>',
      '    ]; // и так далее',
      '    }, // und so weiter',
      '    end -- rest of the module unchanged',
      '    fi # same as before',
      '    pass  # ...',
    ]);
  });

  it('not a comment after code that remarks on that code, nor one of other words', () => {
    never([
      '    }, // end of handlers',
      '    ); // close the pool',
      '    return url -> url; // без изменений',
      '    return false; // sin cambios',
      "    'ppv_limit': 5.0,             # Unchanged",
      '    pass  # Same as the update cache: never fail a command over a cache write.',
      '    pass  # noqa',
      '    end  # class Foo',
      '    end -- end of function',
    ]);
  });
});

describe('placeholders: a whole line in square brackets', () => {
  it('says the code is left out, with or without dots, in a code file', () => {
    onlyAlone([
      '[Rest of the file unchanged]',
      '[remaining tests omitted for brevity...]',
      '    [Other routes unchanged]',
    ]);
  });

  it('not a section header, a list or a comprehension', () => {
    never(['[server]', '[tool.poetry]', '[other]', '["a", "b"]', '    [x for x in others if x]']);
  });

  it('in round brackets by the whole-line rules, three words or more; dots then words; a list item of dots', () => {
    onlyAlone([
      '(rest of file unchanged)',
      '    (remaining methods omitted for brevity)',
      '    ...rest of the component',
      '    ... rest of the component unchanged',
      '  - ...',
    ]);
    never([
      '    (rest xs)',
      '    (other-function a b)',
      '    (defun foo (x) ...)',
      '    (see below)',
      '  - item one',
      '  - ...args',
      '    ...     print(i)',
      '    ...args,',
      '    ...rest',
      '    ... x = 1',
      '    ...         return r',
      '    ... return r',
    ]);
  });

  it('in Markdown outside a code fence too (an HTML comment was the only placeholder there)', () => {
    const old = ['# Guide', '', ...Array.from({ length: 12 }, (_, i) => `Paragraph ${i} of text.`)];
    const neu = ['# Guide', '', '[Rest of the guide unchanged...]'];
    expect(findElisions(neu.join('\n'), old.join('\n'), 3, 'docs/guide.md')).toHaveLength(1);
  });
});

describe('placeholders: what the left-out code is, said in other ways', () => {
  it('the rest of the code, and whose or what for (a preposition, a bracket, a name)', () => {
    onlyAlone([
      '// Rest of the code for rendering the chart (axes, legend, etc.)',
      '# Resto del código para validar el formulario',
      '-- rest of the code of "migrate.sql" (indexes, triggers)',
      '// Le reste du code de la classe Parser (méthodes privées)',
    ]);
    // a sentence about the code that is there, or still to be written
    never([
      '// The rest of the code depends only on the small interface',
      '// the rest of the code will go in here',
      '# rest of code is to make a figure',
    ]);
  });

  it('the others would be written alike; "will" only with likeness', () => {
    onlyAlone([
      '// All other handlers would be implemented the same way...',
      '# The remaining endpoints would follow the same structure',
      '-- other columns could be defined similarly',
      '// additional fields should be handled as needed',
      '// other reducers will look the same',
      '// Others methods would be similar',
    ]);
    never([
      '// the remaining bytes will be written later',
      '// other threads will be handled by the pool',
      '// remaining tests will be added later',
    ]);
  });

  it('"left out" as a predicate, in a later sentence or in the message of a body that ends', () => {
    onlyAlone([
      '"""Build the index. Body omitted for brevity."""',
      '/* Computes totals. Implementation not shown. */',
      '# Loads the model. Details elided - see the notebook.',
      '    throw new Error("Implementation omitted; see the full source");',
      '    panic!("body elided from this excerpt")',
      '    raise NotImplementedError("Truncated here - see the original file")',
    ]);
    // "omitted" before a noun, or omitted from data (not from the text shown)
    never([
      '    raise NotImplementedError("Omitted InceptionV3 arch - special training data not implemented")',
      "    throw new Error('Omitted Cloud documents must not contain archive data')",
      '    throw new Error("value truncated to 255 characters")',
      '// Fields omitted from the JSON fall back to RecoveryPolicy::default().',
    ]);
  });

  it('the whole code elsewhere, a path naming where; a hedge is no condition; a bracket closed by a colon', () => {
    onlyAlone([
      '// see src/server/routes.ts for the complete implementation',
      '# (check the repo for the full script)',
      '-- full source in migrations/0042_init.sql',
      '// keep the existing imports if needed',
      '# keep your other settings as necessary',
      '// (These helpers stay the same as before:',
      '# [Other views unchanged:',
    ]);
    never([
      '// see RFC 7230 section 3 for details',
      '# see utils.py for the helper',
      '// full width is used when the sidebar is hidden',
      '// keep the cache warm if needed, because cold starts are slow',
      '// (see below:',
    ]);
  });
});

describe('placeholders: the floors of this round (tuning figures)', () => {
  it('set 16 (measured once on the merged rules, 120 / 146; tuning data since): 146 / 146, near misses at most as before', () => {
    const set16 = corpus('heldout-16-real.json');
    expect(
      elisionFigures(
        set16.placeholders.map((p) => p.text),
        [],
      ).caught,
    ).toBeGreaterThanOrEqual(146);
    const near = set16.nearMisses.map((p) => p.text);
    expect(elisionFigures([], near).flagged).toBeLessThanOrEqual(18);
    expect(near.filter((t) => replacing(`    ${t}`, 20)).length).toBeLessThanOrEqual(51);
    for (const t of near) expect(addedOnly(`    ${t}`), t).toBe(false);
  });

  it('set 14 (measured once, 119 / 120; tuning data since): at least 119 / 120, its near misses never where nothing was removed', () => {
    const set14 = corpus('heldout-14-real.json');
    expect(
      elisionFigures(
        set14.placeholders.map((p) => p.text),
        [],
      ).caught,
    ).toBeGreaterThanOrEqual(119);
    for (const near of set14.nearMisses)
      expect(addedOnly(`    ${near.text}`), near.text).toBe(false);
  });
});
