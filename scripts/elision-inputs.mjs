/**
 * The placeholder rule's timing workloads, shared by scripts/elision-figures.mjs (--timing) and
 * scripts/elision-ab.mjs: a 15 MB file with 1% of its lines changed and one placeholder, a typical
 * 300-line edit (3 lines rewritten) and a typical truncation (20 lines replaced by a placeholder).
 * Each side is an array of lines.
 */
export function timingInputs() {
  const line = (i) =>
    `    const value_${i} = compute(input_${i}, options) // step ${i} of the pipeline`;
  const big = [];
  let size = 0;
  for (let i = 0; size < 15 * 1024 * 1024; i++) {
    const l =
      i % 50 === 0
        ? `    // ${i % 100 === 0 ? 'the next block' : 'see above'} handles case ${i}`
        : line(i);
    big.push(l);
    size += l.length + 1;
  }
  const bigNew = big.map((l, i) => (i % 100 === 7 ? `${l} + 1` : l));
  bigNew[5000] = '    // ... rest of the pipeline unchanged ...';
  const small = Array.from({ length: 300 }, (_, i) => line(i));
  const smallNew = [
    ...small.slice(0, 120),
    '    // keep the cache warm',
    '    const warm = prime(cache)',
    ...small.slice(123),
  ];
  const trunc = [
    ...small.slice(0, 100),
    '    // ... rest of the pipeline unchanged ...',
    ...small.slice(120),
  ];
  return { big, bigNew, small, smallNew, trunc };
}
