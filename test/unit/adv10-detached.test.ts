import { describe, expect, it } from 'vitest';
import { detaches } from '../../src/flows/hook/detached.js';

/** adv10 (docs/reliability/adv10.md): spellings of a detached command holes7's reader missed or over-read. */
describe('detaches (adv10)', () => {
  it.each([
    ': <(sleep 1; rm f)',
    'echo hi > >(sleep 1; rm f)',
    'exec 3< <(sleep 1; rm f)',
    'coproc { sleep 1; rm f; }',
    'coproc sleep 1',
    'timeout 10 bash -c "(sleep 1; rm f) &"',
    'timeout -s KILL 10 bash -c "(sleep 1; rm f) &"',
    'nice -n 5 setsid -f sh -c "sleep 1; rm f"',
    'env -u X bash -c "(sleep 1; rm f) &"',
    'sudo -u me bash -c "(sleep 1; rm f) &"',
    'env -i bash -c "(sleep 1; rm f) &"',
    'echo "(sleep 1; rm f) &" | sh',
    'sh <<< "(sleep 1; rm f) &"',
    'echo "(sleep 1; rm f) &" | bash -s',
    "bash <<'EOF'\n(sleep 1; rm f) &\nEOF",
    'trap "(sleep 1; rm f) &" EXIT',
    "cat > notes.md <<EOF\nit's done\nEOF\n(sleep 1; rm f) &",
    "cat <<-EOF\n\tit's\n\tEOF\nsleep 9 &",
    'cat <<EOF\n$( (sleep 1; rm f) & )\nEOF',
    "echo $'it\\'s'; (sleep 1; rm f) &",
    "bash -c $'(sleep 1; rm f) \\x26'",
    'echo "rm f" | at now',
    'echo "rm f" | batch',
    'systemd-run --user sh -c "sleep 1; rm f"',
    'sleep 1 \\\n&',
    '((sleep 1; rm f) &)',
    'echo ${x:-"}"} ; (sleep 1; rm f) &',
    'echo "$( (sleep 1; rm f) >/dev/null 2>&1 & )"',
    'docker run -d -v $PWD:/w alpine sh -c "sleep 1; rm /w/f"',
    'podman run -dit img',
    'docker compose up -d',
    'sudo -b sh -c "sleep 1; rm f"',
    "script -qc '(sleep 1; rm f) &' /dev/null",
    "find . -name f -exec sh -c '(sleep 1; rm {}) &' \\;",
    "tmux send-keys -t dev 'rm f' Enter",
    'screen -S x -X stuff "rm f"',
    "echo '* * * * * rm f' | crontab -",
  ])('detaches: %s', (c) => {
    expect(detaches(c)).toBe(true);
  });

  it.each([
    'case x in a) echo a;& b) echo b;; esac',
    'case x in a) echo a;;& b) echo b;; esac',
    'x=$((a & b))',
    '(( a & b )) && echo y',
    'echo "$(( 6 & 3 ))"',
    'echo $((1+2)) && ls',
    '[[ $x == a && $y == b ]]',
    'echo ${x//&/and}',
    "cat <<'EOF' > n.md\nTom & Jerry\nEOF",
    'cat <<EOF > n.md\nTom & Jerry\nEOF',
    'ls &\\\n& echo',
    'diff <(sort a) <(sort b)',
    'while read f; do echo $f; done < <(find .)',
    'echo "$( (cd x; ls) )" && echo "a & b"',
    'systemd-run --user --wait sh -c "rm f"',
    'git commit -m "fix a & b"',
    'sudo -E ./run.sh',
    'docker run --rm -v $PWD:/w alpine ls',
    'docker ps',
    "find . -name '*.py' -exec grep -l x {} +",
    'tmux ls',
    'crontab -l',
    'command -v nohup && echo yes',
    'git commit -m "fix a & b" && sh deploy.sh',
  ])('runs in the foreground: %s', (c) => {
    expect(detaches(c)).toBe(false);
  });
});

/** Commands built to make the reader slow or overflow its stack: an answer, fast (a hook has seconds). */
describe('detaches on pathological commands (adv10)', () => {
  it.each([
    ['$(( '.repeat(20000)],
    ['$( ('.repeat(20000)],
    ['${ '.repeat(20000)],
    ['cat <( '.repeat(20000)],
    ['cat <<E\n'.repeat(20000)],
    ['"$( '.repeat(20000)],
    ['sh <<< "'.repeat(5000)],
    ["bash -c '".repeat(20000)],
  ])('%#: answers within 2 s', (c) => {
    const t = Date.now();
    expect(() => detaches(c)).not.toThrow();
    expect(Date.now() - t).toBeLessThan(2000);
  });

  it('a process substitution nested 20,000 deep is read as detached (past 64 levels), not a stack overflow', () => {
    expect(detaches('cat <( '.repeat(20000))).toBe(true);
  });
});
