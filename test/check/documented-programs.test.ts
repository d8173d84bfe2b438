// The documented programs (shell.ts, DAEMONIZING_PROGRAMS) are named in three places: their
// patterns, the words the prefilter reads them by (PROGRAM_WORDS), and the names it looks for right
// after a quote (QUOTED_PROGRAMS). A program added to one and not the others is silently never
// reported in some files: each entry's example must pass all three, and every entry needs one.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type * as Shell from '../../packages/check/src/check/shell.js';
import { REPO_ROOT } from '../helpers/processes.js';

// Internals of proc-leash-check, not part of its exports: loaded from its build by path.
const shell = (await import(pathToFileURL(join(REPO_ROOT, 'packages/check/dist/check/shell.js')).href)) as typeof Shell;

/** One command per entry, as a caller writes it, by the entry's reported name. */
const EXAMPLES: Record<string, string> = {
  'sshd without -D': 'sshd -p 2222',
  'dnsmasq without --no-daemon': 'dnsmasq --port=5353',
  'supervisord without --nodaemon': 'supervisord -u svc',
  'nginx (daemon on by default)': 'nginx -p /srv/site',
  'transmission-daemon without --foreground': 'transmission-daemon -w /srv/dl',
  'vncserver without -fg': 'vncserver :1 -geometry 1280x800',
  'a FUSE mount without -f': 'sshfs host:/srv /mnt',
  'fail2ban-server without -f': 'fail2ban-server -x',
  'fail2ban-client start without -f': 'fail2ban-client -c /etc/fail2ban start',
  'lxc-start without -F': 'lxc-start -n web -f web.conf',
  'gocryptfs without -fg': 'gocryptfs cipher plain',
  'borg mount without --foreground': 'borg mount /repo::a /mnt',
  'ssh-agent': 'ssh-agent -s',
  'ssh ControlPersist': 'ssh -MN -o ControlPersist=300 host',
  'sudo -b': 'sudo -b server --port 80',
  'wpa_supplicant -B': 'wpa_supplicant -B -i wlan0 -c wpa.conf',
  'ibus-daemon -d': 'ibus-daemon -drx',
  'pulseaudio -D or --start': 'pulseaudio --start',
  'x11vnc -bg': 'x11vnc -display :0 -bg',
  "a server's own -D": 'haproxy -f haproxy.cfg -D',
  'mosquitto -d': 'mosquitto -c m.conf -d',
  'tor --RunAsDaemon 1': 'tor --RunAsDaemon 1',
  'kafka-server-start -daemon': 'kafka-server-start.sh -daemon server.properties',
  'pm2 start': 'pm2 start app.js',
  'forever start': 'forever start app.js',
  'celery multi start': 'celery multi start w1 -A proj',
  'caddy start': 'caddy start --config Caddyfile',
  'adb start-server': 'adb start-server',
  'gpgconf --launch': 'gpgconf --launch gpg-agent',
  'a *-daemon.sh start': 'hadoop-daemon.sh start namenode',
  'dtach -n, -c or -A': 'dtach -c /tmp/s -E -z server',
  'abduco -n': 'abduco -n work server',
  'uwsm app': 'uwsm app -- firefox',
  'uwsm-app': 'uwsm-app firefox',
  'an elevation helper': 'elevate.exe installer.exe /S',
  'nircmd elevate': 'nircmd elevate installer.exe',
};

test('every documented program has an example, reported as shell text and as an argument list', () => {
  assert.deepEqual(Object.keys(EXAMPLES).sort(), [...shell.DOCUMENTED_PROGRAM_ENTRIES].sort());
  for (const [name, example] of Object.entries(EXAMPLES)) {
    assert.match(shell.backgroundingIn(example) ?? '', new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`), `text: ${example}`);
    assert.equal(shell.detachingCommandIn(example.split(' ')), name, `list: ${example}`);
  }
});

test('every documented program passes both of the prefilter\'s word scans', () => {
  for (const example of Object.values(EXAMPLES)) {
    // PROGRAM_WORDS, in the text where the program stands; QUOTED_PROGRAMS, with the command
    // quoted as source writes it (a string that opens on the program), and as a list's first word.
    assert.ok(shell.PROGRAM_WORDS.test(example), `PROGRAM_WORDS: ${example}`);
    assert.ok(shell.QUOTED_PROGRAMS.test(`"${example}"`), `QUOTED_PROGRAMS: "${example}"`);
    const [program, ...rest] = example.split(' ');
    assert.ok(shell.QUOTED_PROGRAMS.test(`["${program}", "${rest.join('", "')}"]`) || shell.PROGRAM_WORDS.test(`["${program}", "${rest.join('", "')}"]`), `list: ${example}`);
  }
});
