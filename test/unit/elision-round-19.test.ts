/**
 * Placeholders, the round before set 19 (issue 20 item 6, branch elision8): set 18 was measured
 * once at the merge (179 / 200) and is tuning data since. Its misses were mostly words the rules
 * lacked in other languages, and JSON's `"...": "..."`; its fresh comments were flagged alone where
 * 20 lines went at 18 / 2,038 = 0.88%. The mechanisms this round built, each tried on variants this
 * round's engineer wrote (not set 18's strings; each checked against `main`'s rules before it was
 * written down: `main` misses every one of the first group beside new code, and the ones marked so
 * alone), with real comments beside each that must stay unflagged. Set 19 (heldout-19*) is held
 * out: nothing here reads it.
 *
 * - other languages' words read as their English kin (elision-phrases.json `foreign.kin`, `small`);
 * - a map's or a table's key that is only an ellipsis, mapped to the same ellipsis;
 * - the ALONE rule: prose by its shape (a question, a sentence's last words, an imperative that
 *   makes something new, an irregular passive, a table's row, an interpolation, dots then a word
 *   of cause, a list whose first item is a sentence).
 */
import { describe, expect, it } from 'vitest';
import { elisionFigures, isElisionLine } from '../../src/core/elision.js';
import { elisionCorpus, elisionProbe } from '../elision-probe.js';

const { replacing, besideNewCode, besideRewrite, addedOnly, onlyAlone, never } = elisionProbe();

describe("placeholders: other languages' words, read as their English kin", () => {
  it('a comment that says the rest is unchanged, the same or as before, in 20 languages: beside new code too', () => {
    for (const line of [
      '    // Restul codului rămâne neschimbat',
      '    // A kód többi része változatlan',
      '    // Kodun geri kalanı aynı',
      '    // Ο υπόλοιπος κώδικας παραμένει ίδιος',
      '    // باقي الكود كما هو',
      '    // שאר הקוד ללא שינוי',
      '    // بقیه کد بدون تغییر',
      '    // বাকি কোড অপরিবর্তিত',
      '    // बाकी कोड पहले जैसा',
      '    // Baki kod sama seperti sebelumnya',
      '    // Il resto del codice rimane uguale',
      '    // O restante do código continua igual',
      '    // Resten av koden som tidigare',
      '    // Loput koodista ennallaan',
      '    // Rest van de code blijft hetzelfde',
      '    // Sisa fungsi seperti sebelumnya',
      '    # Resto de la lógica igual que antes',
      '    // Reszta metod bez zmian',
      '    -- Остальная часть запроса как раньше',
      '    // Pozostałe funkcje wyglądają tak samo',
    ]) {
      expect(isElisionLine(line), line).toBe(true);
      expect(besideNewCode(line, 4, 4), `${line} (beside new code)`).toBe(true);
      expect(addedOnly(line), `${line} (nothing removed)`).toBe(false);
    }
  });

  it('the same, written after those were caught, as a check that the vocabulary carries over (main misses each beside new code)', () => {
    for (const line of [
      '    // Le reste du code reste inchangé',
      '    // Rest der Funktion wie gehabt',
      '    // Restante do arquivo permanece igual',
      '    // Il resto del file è invariato',
      '    // Решта коду як раніше',
      '    // Diğer fonksiyonlar aynı kalacak',
      '    // Các hàm khác giữ nguyên',
      '    // बाकी कोड वैसा ही रहेगा',
      '    // بقية الكود بدون تغيير',
      '    // Pozostała część kodu bez zmian',
      '    // Reszta funkcji taka sama',
      '    // Zbytek souboru zůstává stejný',
      '    // Resten av filen är oförändrad',
      '    // Ο υπόλοιπος κώδικας ως έχει',
      '    // שאר הפונקציות זהות',
      '    // بقیه توابع مانند قبل',
      '    // বাকি ফাংশন একই',
      '    // Muut metodit ennallaan',
      '    // A többi függvény változatlan',
      '    // Restul funcțiilor la fel ca înainte',
      '    // Resten af koden er uændret',
      '    // Zvyšok kódu bez zmeny',
      '    // Останалата част от кода без промени',
      '    // Ang natitirang code ay pareho',
    ]) {
      expect(besideNewCode(line, 4, 4), line).toBe(true);
      expect(addedOnly(line), `${line} (nothing removed)`).toBe(false);
    }
  });

  it('scripts written without spaces and marks of omission or repetition, alone where code went (main misses the first two)', () => {
    onlyAlone([
      '    // 〃',
      '    # 略',
      '    // 残りのメソッドも同様',
      '    // 其余函数同上',
      '    <!-- 나머지 코드는 그대로 -->',
      '    /// 中略 ///',
    ]);
  });

  it("not another language's real comments that use the words in an honest sense, beside new code or where nothing went", () => {
    for (const line of [
      '    // Código de retorno igual a cero indica éxito',
      '    // El resto de la división entera',
      '    // Der Rest wird in der nächsten Iteration verarbeitet.',
      '    # Si el resto es cero, devolver el mismo valor',
      "    // Le code existant utilise encore l'ancienne API",
      '    // Остальные поля заполняются при сохранении',
      '    // Restul elementelor sunt sortate descrescător',
      '    // 其余情况返回空',
      '    // 以下の関数は同じ引数を取る',
      '    // Kod błędu jest taki sam jak w HTTP',
      '    // Aynı isimde dosya varsa üzerine yaz',
      '    // Sisa waktu dalam detik',
      '    // बाकी राशि की गणना यहाँ होती है',
      '    // Код ответа тот же, что и у сервера',
      '    // La lógica es la misma que en el backend, pero en el cliente',
      '    // Die bestehende Verbindung wird wiederverwendet',
      '    // 戦略パターン',
      '    <!-- 省略号 -->',
    ]) {
      expect(besideRewrite(line), line).toBe(false);
      expect(addedOnly(line), `${line} (nothing removed)`).toBe(false);
    }
    // a question asks, in any language
    never(['    // ¿El código existente sigue funcionando?']);
  });

  it('an English comment that holds a word of another language is read as it is', () => {
    for (const line of [
      '    // de-dupe the rest of the keys',
      '    // die if the other process holds the lock',
      '    # a la carte: same price as before',
    ])
      expect(besideRewrite(line), line).toBe(false);
  });
});

describe('placeholders: a key that is only an ellipsis, mapped to the same ellipsis', () => {
  it("JSON's, a dict's, TOML's, inline or on its own line", () => {
    onlyAlone([
      '    "...": "...",',
      '    "items": [{ "...": "..." }],',
      '    "…": "…"',
      '    "..." = "..."',
      '    config = {"name": "x", "...": "..."}',
    ]);
  });

  it("not a typographer's map from dots to the ellipsis, nor an ellipsis as a value", () => {
    never([
      "    replacements = { '...': '…', '--': '—' }",
      '    "loading": "...",',
      '    SPINNER = [".", "..", "..."]',
    ]);
  });
});

describe('placeholders, the ALONE rule: prose by its shape', () => {
  it('not a sentence that ends on the line, a question, an imperative that makes something new, an irregular passive', () => {
    never([
      '    # and the other workers.',
      '    // or any other transport.',
      '    -- Build a new map with the same keys as the original one',
      '    // Open a socket on the same port as the existing server.',
      '    // Other headers are sent as they are.',
      '    // The old token is thrown away, the rest are kept.',
      '    # keep the old handler for the other routes?',
    ]);
  });

  it("not a table's row, an interpolation, dots then a word of cause, a list whose first item is a sentence", () => {
    never([
      '    --   name      type     default    rest',
      '    //   field    offset    size     other',
      '    #{rest}',
      '    # ... whereas the other branch keeps the same order',
      '    # Parses the headers of each request, response, and trailer...',
    ]);
  });

  it('still the placeholders of those shapes', () => {
    onlyAlone([
      '    // validation, retries, logging...',
      '    // ... existing handlers',
      '    # and so on',
      '    // Other methods stay the same.',
      '    // (rest of the component unchanged)',
      '    // ... rest of the reducers',
    ]);
  });
});

describe('placeholders: the floors of this round (tuning figures)', () => {
  it('set 18 (measured once at the merge, 179 / 200; tuning data since): 197 / 200, near misses beside new code at most as before', () => {
    const set18 = elisionCorpus('heldout-18-real.json');
    expect(
      elisionFigures(
        set18.placeholders.map((p) => p.text),
        [],
      ).caught,
    ).toBeGreaterThanOrEqual(197);
    const near = set18.nearMisses.map((p) => p.text);
    expect(elisionFigures([], near).flagged).toBeLessThanOrEqual(15);
    for (const t of near) expect(addedOnly(`    ${t}`), t).toBe(false);
  });

  it("set 18's 2,038 fresh comments: at most 0.5% alone where 20 lines went", () => {
    const comments = [...new Set(elisionCorpus18Comments().map((c) => c.text))];
    const alone = comments.filter((c) => replacing(`    ${c}`, 20));
    expect(alone.length / comments.length).toBeLessThanOrEqual(0.005);
  });
});

function elisionCorpus18Comments(): Array<{ text: string }> {
  return (
    elisionCorpus('heldout-18-comments.json') as unknown as { comments: Array<{ text: string }> }
  ).comments;
}
