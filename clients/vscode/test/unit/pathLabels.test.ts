/* Open profiles of one base name (every run's report.sqlite) are told apart by
 * the fewest parent folders, as VS Code's tabs do. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distinguishingDirs } from '../../src/client/pathLabels';

test('unique base names need no folder', () => {
  assert.deepEqual(distinguishingDirs(['/w/a.sqlite', '/w/b.sqlite']), ['', '']);
  assert.deepEqual(distinguishingDirs([]), []);
});

test('run reports: the run folder tells them apart', () => {
  assert.deepEqual(
    distinguishingDirs(['/ws/.nsys-ai/runs/r1/report.sqlite', '/ws/.nsys-ai/runs/r2/report.sqlite', '/ws/x.sqlite']),
    ['r1', 'r2', '']);
});

test('as many folders as it takes, and the whole path when one is a suffix of another', () => {
  assert.deepEqual(distinguishingDirs(['/a/x/run/report.sqlite', '/b/x/run/report.sqlite', '/c/y/run/report.sqlite']),
    ['a/x/run', 'b/x/run', 'y/run']);
  assert.deepEqual(distinguishingDirs(['/run/report.sqlite', '/a/run/report.sqlite']), ['run', 'a/run']);
  assert.deepEqual(distinguishingDirs(['/report.sqlite', '/a/report.sqlite']), ['/', 'a']);
});
