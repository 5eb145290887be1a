import { describe, expect, it } from 'vitest';
import { detaches } from '../../src/flows/hook/detached.js';

/** adv11 (docs/reliability/adv11.md): spellings of a detached command adv10's reader missed or over-read. */
describe('detaches (adv11)', () => {
  it.each([
    "bash -ce '(sleep 1; rm f) &'",
    "bash -c -- '(sleep 1; rm f) &'",
    "bash -c -o pipefail '(sleep 1; rm f) &'",
    "if setsid -f sh -c 'sleep 1; rm f'; then echo ok; fi",
    "if bash -c '(sleep 1; rm f) &'; then :; fi",
    "while ! setsid -f sh -c 'sleep 1; rm f'; do :; done",
    "until setsid -f sh -c 'sleep 1; rm f'; do :; done",
    "timeout --signal KILL 60 setsid -f sh -c 'sleep 1; rm f'",
    "sudo --user me setsid -f sh -c 'sleep 1; rm f'",
    "env --unset HOME setsid -f sh -c 'sleep 1; rm f'",
    'env -S \'setsid -f sh -c "sleep 1; rm f"\'',
    "sudo --background sh -c 'sleep 1; rm f'",
    "sudo -nb sh -c 'sleep 1; rm f'",
    "sudo -E docker run -d -v $PWD:/w alpine sh -c 'sleep 1; rm /w/f'",
    "doas setsid -f sh -c 'sleep 1; rm f'",
    "printf '%s\\n' '(sleep 1; rm f) &' | bash -s -- x",
    "echo '(sleep 1; rm f) &' | bash /dev/stdin",
    "echo '(sleep 1; rm f) &' | bash -- /dev/fd/0",
    "cat <<'EOF' | bash\n(sleep 1; rm f) &\nEOF",
    "cat <<'EOF' | sh -s\nsetsid -f sh -c 'sleep 1; rm f'\nEOF",
    "/usr/bin/sets?d -f sh -c 'sleep 1; rm f'",
    "/usr/bin/no[h]up sh -c 'sleep 1; rm f' &",
    "tmux new-window 'sleep 1; rm f'",
    "tmux split-window -h 'sleep 1; rm f'",
    "tmux display-popup -E 'sleep 1; rm f'",
    "taskset -c 0 setsid -f sh -c 'sleep 1; rm f'",
    "taskset 0x1 setsid -f sh -c 'sleep 1; rm f'",
    "flock /tmp/l setsid -f sh -c 'sleep 1; rm f'",
    "flock -w 5 /tmp/l -c '(sleep 1; rm f) &'",
    "chrt -i 0 setsid -f sh -c 'sleep 1; rm f'",
    "unshare -U setsid -f sh -c 'sleep 1; rm f'",
    "busybox setsid -f sh -c 'sleep 1; rm f'",
    "strace -f -o /dev/null setsid -f sh -c 'sleep 1; rm f'",
    "chroot / setsid -f sh -c 'sleep 1; rm f'",
    "mksh -c '(sleep 1; rm f) &'",
    "fish -c 'sleep 1; rm f &'",
    'docker run --rm -v "$PWD":/w -w /w -d alpine sh -c \'sleep 1; rm f\'',
    'docker run --name x -dp 80:80 nginx',
    'docker container run --detach img',
    'docker --context prod run -d img',
    'docker compose -f x.yml up --build -d web',
    'docker exec -d c touch /w/x',
    'docker start web',
    'docker compose restart web',
    'systemctl --user start watcher.service',
    'systemctl enable --now watcher',
    'sudo service watcher start',
    'pm2 start server.js',
    'npx pm2 start server.js',
    'forever start server.js',
    // a background job with a wait after it: still read as detached (adv11 let the shell's wait
    // through; adv12 found jobs that end the shell before it, `kill $$`, and waits made no-ops by
    // code run from elsewhere: what the shell waits for cannot be read from the text)
    'npm run lint & npm run test & wait',
    'for f in a b; do gzip "$f" & done; wait',
    '(sleep 1; rm f) & wait',
    'a &\nb &\nwait\necho done',
    'a & wait; echo all done',
    'nohup a & wait',
    '(sleep 1; rm f) & kill $$ & wait',
    'a & b && wait',
    'a & false; wait',
    'a & wait $!',
    '(a &) ; wait',
    '{ a & } | cat; wait',
    'cat x | while read l; do a & done; wait',
    'a & wait &',
    'a & wait; b &',
    "bash -c 'x &' & wait",
    'x=`sleep 9 &`; wait',
    'echo $(sleep 9 &) ; wait',
    ': <(sleep 1; rm f) & wait',
    'a & exit 0; wait',
    'a & b | c; wait',
    'set -e; a & b; wait',
    // a here-document's line `wait` is data
    '(sleep 1; rm f) <<EOF &\nwait\nEOF',
    // wait made a no-op in the command itself
    'wait() { :; }; (sleep 1; rm f) & wait',
    'function wait { :; }; (sleep 1; rm f) & wait',
    'enable -n wait; (sleep 1; rm f) & wait',
    'shopt -s expand_aliases; alias wait=:; (sleep 1; rm f) & wait',
  ])('detached: %s', (command) => {
    expect(detaches(command)).toBe(true);
  });

  it.each([
    // nohup runs its command in the foreground (holes8)
    "/usr/bin/nohu* sh -c 'sleep 1; rm f' >/dev/null",
    "flock /tmp/l -c 'make test'",
    'flock /tmp/l make',
    'echo nohup',
    'git commit -m "setsid"',
    'git commit -m "$(cat <<\'EOF\'\nFix the thing & the other\nnohup\nEOF\n)"',
    "cat <<'EOF' > notes.md\nTom & Jerry\nnohup\nEOF",
    "cat <<'EOF' | python3\nprint('a & b')\nEOF",
    "cat <<'EOF' | sh\necho 'a & b'\nEOF",
    'mapfile -t files < <(git ls-files)',
    "readarray -t x < <(find . -name '*.py')",
    'if [ -f x ]; then echo yes; fi',
    'while read -r l; do echo "$l"; done < file.txt',
    'taskset -c 0 make -j2',
    'ls *',
    '[ -f x ] && echo ok',
    'strace -f -o /tmp/t ls',
    "echo a | bash -c 'cat'",
    "printf 'x\\n' | sh script.sh",
    'busybox ls',
    'tmux capture-pane -p -t dev',
    'tmux ls',
    'timeout --signal KILL 60 npm test',
    "env -S 'make test'",
    'sudo -u me make install',
    "docker exec -it db psql -U postgres -d app -c 'select 1'",
    'docker compose exec db psql -d app',
    "docker run --rm -v $PWD:/src -w /src golang go build -ldflags '-s'",
    'docker run --rm alpine ls -d /tmp',
    'docker network create -d bridge x',
    'docker compose up',
    'docker start -a web',
    'systemctl status watcher',
    'pm2 logs',
    'npm start',
  ])('not detached: %s', (command) => {
    expect(detaches(command)).toBe(false);
  });

  // this round's own glob reading, on a command built to be slow: '*' x 40 + 'x' backtracked for
  // minutes in the pattern made of it (found before merge)
  it.each([
    '*'.repeat(40) + 'x -f sh',
    '?*'.repeat(30) + 'x',
    'timeout ' + Array(20000).fill('-*?').join(' '),
    Array(5000).fill('a &').join(' ') + ' wait',
  ])('answers within 2 s: %#', (command) => {
    const t = Date.now();
    detaches(command);
    expect(Date.now() - t).toBeLessThan(2000);
  });
});
