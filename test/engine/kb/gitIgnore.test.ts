import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { configPath, excludesFileInConfig, gitConfigPlaces } from '../../../src/engine/kb/gitIgnore';

void test('core.excludesFile is read from a git config as git reads it: any case, quotes, escapes, comments; the last one wins; other sections do not count', () => {
  assert.equal(excludesFileInConfig('[core]\n\texcludesFile = ~/.gitignore_global\n'), '~/.gitignore_global');
  assert.equal(excludesFileInConfig('[Core]\n  ExcludesFile=/a b/ignore  # mine\n'), '/a b/ignore');
  assert.equal(excludesFileInConfig('[core]\n\texcludesfile = "/with space/ig\\"n"  ; note\n'), '/with space/ig"n');
  assert.equal(excludesFileInConfig('[core] excludesFile = /same/line\n'), '/same/line');
  assert.equal(excludesFileInConfig('[core]\nexcludesFile = /first\n[user]\nname = x\n[core]\nexcludesFile = /second\n'), '/second');
  assert.equal(excludesFileInConfig('[core]\n\texcludesFile =\n'), '', 'set empty: no excludes file');
  assert.equal(
    excludesFileInConfig('[user]\n\texcludesFile = /not/core\n[core "x"]\n\texcludesFile = /sub\n# [core] excludesFile = /c\n'),
    undefined,
  );
});

void test('the config files and the default excludes file follow HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL and GIT_CONFIG_NOSYSTEM', () => {
  assert.deepEqual(gitConfigPlaces('/r/.git/config', { HOME: '/h' }), {
    configFiles: ['/etc/gitconfig', '/h/.config/git/config', '/h/.gitconfig', '/r/.git/config'],
    defaultExcludesFile: '/h/.config/git/ignore',
    home: '/h',
  });
  assert.deepEqual(gitConfigPlaces(undefined, { HOME: '/h', XDG_CONFIG_HOME: '/x', GIT_CONFIG_GLOBAL: '/g', GIT_CONFIG_NOSYSTEM: '1' }), {
    configFiles: ['/g'],
    defaultExcludesFile: '/x/git/ignore',
    home: '/h',
  });
  assert.equal(configPath('~/ig', '/h', '/r'), join('/h', 'ig'));
  assert.equal(configPath('team.ignore', '/h', '/r'), join('/r', 'team.ignore'));
  assert.equal(configPath('/abs', '/h', '/r'), '/abs');
});
