/**
 * Placeholders, the round before set 18 (issue 20 item 6, branch elision7): set 17 was measured
 * once at the merge (165 / 175) and is tuning data since; its ten misses, grouped by how the
 * placeholder works (not by its words), gave the rules below. Each is tried on variants this round's
 * engineer wrote (other comment syntaxes, other natural languages, other words for "rest",
 * "omitted", "unchanged"), not on set 17's strings, with near misses beside each. The second half
 * tries the mechanisms earlier held-out sets missed at their measurement (docs/reliability.md) on
 * variants none of them holds: the generalisation check of the rules built for them. Set 18
 * (heldout-18*) is held out: nothing here reads it.
 *
 * - a block comment of another syntax inline after code (`Proof. (* ... *) Qed.`);
 * - a literal whose whole value is a comment naming what it holds (`= [ /* URLs misturadas * / ];`);
 * - a comment that opens a body at the line's end and says the body is left out;
 * - "the rest of the code" with a relative clause of what it does;
 * - the writer showing a selection; the reader's own code kept, or to be brought in;
 * - "for brevity" in other languages, with their words of leaving out or hiding.
 */
import { describe, expect, it } from 'vitest';
import { elisionFigures } from '../../src/core/elision.js';
import { elisionCorpus, elisionProbe } from '../elision-probe.js';

const { replacing, addedOnly, onlyAlone, never } = elisionProbe();

describe('placeholders: a block comment of another syntax inline after code', () => {
  it("ML's, Haskell's, Jinja's, Handlebars', Blade's, JSP's, Razor's, Lisp's, D's and Smarty's block comments, closed on the line", () => {
    onlyAlone([
      '    let f x = (* ... *) x',
      '    main = do {- ... -} return ()',
      '    <div>{# ... #}</div>',
      '    <ul>{{!-- ... --}}</ul>',
      '    <section>{{-- ... --}}</section>',
      '    <td><%-- ... --%></td>',
      '    <p>@* ... *@</p>',
      '    (defun f (x) #| ... |# x)',
      '    function f() { /+ ... +/ }',
      '    {if $x}{* ... *}{/if}',
      '    Lemma l. Proof. (* rest of the proof unchanged *) Qed.',
      '    <div>{# other fields stay the same #}</div>',
    ]);
  });

  it('not code that only looks like an opener, nor a comment of other words', () => {
    never([
      '    let y = x (* the identity *)',
      '    x = a (* b)',
      '    f = (*) 2',
      '    xs = {-1, 2, 3}',
      '    <div>{# the card header #}</div>',
      '    <p>@* shown to admins only *@</p>',
    ]);
  });
});

describe('placeholders: a literal whose whole value is a comment naming what it holds', () => {
  it('a list, a map or an array of any language, the comment in any words', () => {
    onlyAlone([
      '    const routes = [ /* admin routes, user routes */ ];',
      '    config = { /* database settings */ }',
      '    let handlers = vec![ /* the event handlers */ ];',
      '    $map = array( /* country codes */ );',
      '    private static final String[] NAMES = { /* nomes dos clientes */ };',
      '    var names = new[] { /* customer names */ };',
      '    var items = new List<string> { /* menu items */ };',
      '    hosts := []string{ /* the cluster nodes */ }',
      '    m := map[string]int{ /* word counts */ }',
      '    let xs = @[ /* colours */ ];',
      '    items: [ /* продукты каталога */ ],',
    ]);
  });

  it('not one that says it is empty or left so on purpose, a type, a number, a directive, nor a call or a body', () => {
    never([
      '    const deps = [ /* none */ ];',
      '    const x = { /* empty */ };',
      '    useEffect(() => {}, [ /* no deps */ ]);',
      '    int a[] = { /* 0 */ };',
      '    opts = {/* TODO */}',
      '    f(/* options */ {})',
      '    const xs: string[] = [ /* string */ ];',
      '    const mod = import(/* webpackChunkName: "x" */ "./x");',
      '    catch (e) { /* ignore errors */ }',
      '    constructor() { /* nothing to do */ }',
      '    const state = { /* intentionally blank */ };',
      '    var names = new[] { /* empty */ };',
      '    hosts := []string{ /* none yet */ }',
    ]);
  });
});

describe("placeholders: a comment that opens a body at the line's end and says it is left out", () => {
  it("after a brace, a colon, `do`, `then`, an arrow or a definition's parameters, whatever its next clause says", () => {
    onlyAlone([
      "    if ($action === 'approve') { /* omitted for brevity but safe to add back if needed */",
      '    def handle(self):  # omitted for brevity, same as the GET handler',
      '    } else { // body elided, see the previous answer for the details',
      '    for (const row of rows) { // 省略',
      '    function M.setup(opts) -- omitted for brevity, add back if needed',
      '    items.each do |item| # omitted for brevity but restore it if you need it',
      '    if ok then -- elided here, the loop is the same as before if you want it',
    ]);
  });

  it('not a comment on the body that follows: staying the same, keeping the rest, an instruction', () => {
    never([
      '    if (x) { // keep the cache warm',
      '    for (const k of keys) { // skip the private ones',
      '    addEventListeners() { // same as before, but passive',
      '    except Exception as exc:  # keep the rest of the stack alive',
      '    while (queue.length) { // drain what is left',
      '    function M.setup(opts) -- runs once, if needed',
      '    def render(self):  # only if the cache is cold',
    ]);
  });
});

describe('placeholders: the rest of the code, with a relative clause of what it does', () => {
  it('in any syntax and language', () => {
    onlyAlone([
      '    # rest of the code which builds the tree',
      '    # rest of the function which formats the report',
      '    // rest of the handler that validates the input',
      '    // the remainder of the function that parses headers',
      '    -- rest of the query that joins the orders',
      '    // resto de la lógica que usa envVar',
      '    // le reste du code qui gère les erreurs',
      '    // der Rest der Logik, die die Dateien liest',
    ]);
  });

  it('not a sentence about code that is there: a verb after the clause', () => {
    never([
      '    // the rest of the code that uses this must be updated',
      '    # the rest of the logic that uses envVar is in utils.py',
      '    // the rest of the code that handles errors lives in errors.ts',
    ]);
  });
});

describe("placeholders: the writer shows a selection; the reader's own code kept or to be brought in", () => {
  it('"I" or the participle of a verb of showing, then the few chosen; or the selection said passively, as "here are", or alone in brackets', () => {
    onlyAlone([
      "    // I'll only show the main ones",
      '    // (showing just the important tests)',
      "    # I've included the key methods only",
      '    // including only the relevant ones here',
      '    -- I listed the most important columns',
      '    # (only the key ones are shown)',
      '    # only the main endpoints are listed here',
      '    # here are a few of them',
      '    // (just a few examples)',
      '    // (selected tests only)',
      '    // (a subset of the cases)',
    ]);
  });

  it('not an instruction, nor a remark on which come first', () => {
    never([
      '    // include the key ones in the cache',
      '    # the key ones are sorted first',
      '    // show the main menu',
      '    // only the key ones are cached',
      '    # a few of them are cached',
    ]);
  });

  it("keep the reader's code, named in a few words; the reader told to bring code of their own", () => {
    onlyAlone([
      '    # [keep your validation logic]',
      '    // keep your detailed parsing code here',
      '    ; retain your startup macros',
      "    # You'll need to add the other handlers as in your existing file",
      '    // you will have to port the remaining helpers from your old version',
    ]);
  });

  it('not advice on the code that is there', () => {
    never([
      '    // keep your API key secret',
      '    // keep your logic simple',
      '    # you will need to compute the mean first',
      '    // keep your functions small and pure',
    ]);
  });
});

describe('placeholders: "for brevity" in other languages', () => {
  it('with a word of leaving out or hiding, in any clause', () => {
    onlyAlone([
      '    # Make sure they are present here. I hid them for brevity.',
      '    // Asegúrate de que estén aquí. Los omití por brevedad.',
      '    // Stellen Sie sicher, dass sie vorhanden sind. Der Kürze halber weggelassen.',
      "    // Vérifiez qu'ils sont présents. Je les ai omis par souci de concision.",
      '    # Ho omesso il resto per brevità.',
      '    // Для краткости остальные методы опущены.',
      '    // Dla zwięzłości pominięto pozostałe metody.',
    ]);
  });

  it('not "for brevity" said of the code that is there', () => {
    never([
      '    # use short names for brevity',
      '    // для краткости используем короткие имена',
      '    // por brevedad usamos nombres cortos',
    ]);
  });
});

describe('near misses: what the program does to the rest, said in the passive, is no stand-in alone', () => {
  it('a participle of an act on data in the first clause', () => {
    never([
      '    // the rest of the list is sorted by date',
      '    # Remaining rows are discarded after the import',
      '    -- other columns are indexed nightly',
      '    <!-- the remaining sections are loaded lazily -->',
      '    ; rest of the buffer is zeroed',
    ]);
  });

  it('not one of staying, leaving out, showing or writing code, nor said of likeness or after dots', () => {
    onlyAlone([
      '    // Other handlers are implemented similarly',
      '    // the rest is omitted',
      '    -- The remaining tables are created the same way as above',
      '    # rest of the methods are unchanged',
      '    // ... rows are rendered when the data arrives',
      '    // remaining routes are defined as before',
    ]);
  });
});

describe('placeholders: the mechanisms earlier held-out sets missed, on variants none of them holds', () => {
  it('syntaxes and looser sentences (set 5), what stays then goes on (set 6), rest remains but, others similarly, everything else (sets 7-8)', () => {
    onlyAlone([
      '    ;; ... rest of the macro definitions unchanged',
      '    @REM ... the other build steps stay as they were',
      '    40 REM ... rest of program as before',
      '    -- the rest of the procedure will remain the same',
      "    ' rest unchanged helpers plus the new export routine",
      '    -- existing triggers remain the same except the audit one',
      '    % keep existing solver but ensure the tolerance is passed',
      '    <!-- same as before for the footer links -->',
      '    ; Keep existing macros:',
      '    (* Rest of the module remains the same, but rename the functor *)',
      '    {- everything else stays exactly the same -}',
      "    ' Other subs can be similarly updated.",
      '    -- [omitted trigger bodies and index definitions for brevity]',
      '    # (unchanged) ... all the way down to the main loop',
      '    ...    # the remainder of the loop body is unchanged',
    ]);
  });

  it('wordings (set 10), a lead then a clause (sets 11-12), a cut mark with words and a long clause (set 15), code and brackets that stand in (set 16)', () => {
    onlyAlone([
      '    {{!-- Keep the existing footer --}}',
      '    # ditto for the other env files',
      '    % (left intact)',
      '    -- TODO: port remaining procedures from the old schema',
      '    <%-- Markup truncated to save space --%>',
      '    @* similar for the remaining cards *@',
      '    -- Same as above but for the staging database',
      '    ; Similarly for the Linux, BSD and Solaris targets with their own paths',
      '    (* Code continues, using acc and xs to fold the tree *)',
      '    # Same logic as the windows installer but with /opt paths',
      '    -- [snip] the insert statements for every lookup table',
      '    ; Implementation omitted for brevity, you would usually read the INI file here',
      '    {{-- ... remaining table rows ... --}}',
      '    def load(self): ...  # unchanged',
      '    fun render() { ... }',
      '    ]; // 其余配置不变',
      '    [Rest of the configuration unchanged]',
      '    # Resto del script de instalación (descarga, permisos, etc.)',
      '    // Il resto del codice per la gestione degli errori',
      '    // Der restliche Code für die Anmeldung',
    ]);
  });

  it('other natural languages, other words for the rest and for unchanged', () => {
    onlyAlone([
      '    // остальные методы без изменений',
      '    # reszta kodu bez zmian',
      '    // zbytek kódu beze změny',
      '    // resten av koden är oförändrad',
      '    // kodun geri kalanı aynı',
      '    // sisa kode tetap sama',
      '    // phần còn lại giữ nguyên',
      '    // 残りのコードは変更なし',
      '    // 나머지 코드는 동일합니다',
      '    // 其他方法保持不变',
      '    // los demás métodos quedan igual',
      '    // les autres méthodes restent identiques',
      '    // gli altri metodi restano invariati',
      '    // die übrigen Methoden bleiben gleich',
      '    // de overige methoden blijven ongewijzigd',
      '    # o resto permanece igual',
    ]);
  });
});

describe('placeholders: the floors of this round (tuning figures)', () => {
  it('set 17 (measured once at the merge, 165 / 175; tuning data since): 175 / 175, near misses at most as before', () => {
    const set17 = elisionCorpus('heldout-17-real.json');
    expect(
      elisionFigures(
        set17.placeholders.map((p) => p.text),
        [],
      ).caught,
    ).toBeGreaterThanOrEqual(175);
    const near = set17.nearMisses.map((p) => p.text);
    // (26 since elision8: `// RESTO DEL CODICE AI (invariato ma con limit parameter)`, read in English,
    // is what `// Rest of the code AI (unchanged but with limit parameter)` is, which these rules flag)
    expect(elisionFigures([], near).flagged).toBeLessThanOrEqual(26);
    expect(near.filter((t) => replacing(`    ${t}`, 20)).length).toBeLessThanOrEqual(62);
    for (const t of near) expect(addedOnly(`    ${t}`), t).toBe(false);
  });
});
