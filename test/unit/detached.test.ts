import { describe, expect, it } from 'vitest';
import { detaches } from '../../src/flows/hook/detached.js';

/** The hook's reading of a shell command that leaves something running after the shell returns (docs/reliability/holes7.md). */
describe('detaches', () => {
  it.each([
    '(sleep 1; rm keep.py) >/dev/null 2>&1 &',
    'npm run dev &',
    'npm run dev&',
    'sleep 5 & rm x',
    'sleep 5 &\necho started',
    'a && (b &) && c',
    'x=$(sleep 1 & echo $!)',
    'echo "$(rm -rf src &)"',
    'echo `sleep 2 &`',
    'nohup python server.py > log 2>&1 &',
    '/usr/bin/nohup ./run.sh &',
    'setsid -f sh -c "rm keep.py"',
    'sh -c "sleep 1" & disown',
    'sleep 1; disown',
    'screen -dmS job ./run.sh',
    'tmux new-session -d "rm keep.py"',
    'rm x & # later',
    "bash -c 'sleep 1' &",
    'X=1 nohup ./job &',
    // nohup runs what follows it: read past it (holes8)
    'nohup setsid ./job',
    "nohup bash -c 'sleep 1 &'",
    'sudo setsid ./job',
    // holes7 adversary: a script handed to a shell or eval, quoted
    "bash -c '(sleep 1; rm keep.py) &'",
    'sh -c "sleep 1; rm keep.py &"',
    "bash -lc 'nohup ./job &'",
    "eval 'sleep 1 &'",
  ])('detaches: %s', (c) => {
    expect(detaches(c)).toBe(true);
  });

  it.each([
    'ls',
    'npm test && npm run build',
    'make 2>&1 | tee log',
    'make &> log',
    'make &>> log',
    'cmd >&2',
    'cmd 1>&2 2>&1',
    'cat <&3',
    'cmd |& tee log',
    "echo 'a & b'",
    'echo "a & b"',
    'echo a \\& b',
    'grep -r "nohup" src/',
    "echo 'setsid'",
    'git log # run it & see',
    'true || false',
    'echo "$(date)"',
    'echo nohup',
    'git commit -m "setsid and disown"',
    'man nohup',
    "bash -c 'npm test && echo ok'",
    "sh -c 'make 2>&1'",
    // holes8: nohup alone runs its command in the foreground (deaf to SIGHUP); only `&` detaches it
    'nohup python server.py > log 2>&1',
    '/usr/bin/nohup ./run.sh',
    'X=1 nohup ./job',
    "bash -lc 'nohup ./job'",
    'nohup make && nohup make test',
  ])('runs in the foreground: %s', (c) => {
    expect(detaches(c)).toBe(false);
  });
});
