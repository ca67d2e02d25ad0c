import { configDefaults, defineConfig } from 'vitest/config';

// test/contention/ runs CPU hogs beside a server: vitest runs its files after every other file has
// finished, one at a time, so the hogs starve no other test. Projects run in groups by
// sequence.groupOrder, lowest first, each group once the one before has settled.
const CONTENTION = 'test/contention/**';

export default defineConfig({
  test: {
    // no test asserts on time; a timeout only ends a hung one. vitest's 5 s (10 s for hooks) is for
    // unit tests on a quiet machine: here a property test of 300 runs took 5.2 s beside a busy loop and
    // another vitest run, and failed for it alone
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: {
      // the service imports msgpackr's subpaths, which never load the native string extractor;
      // tests import the main entry, which would switch it on for the app under test too
      MSGPACKR_NATIVE_ACCELERATION_DISABLED: 'true',
    },
    projects: [
      { extends: true, test: { name: 'suite', exclude: [...configDefaults.exclude, CONTENTION], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'contention', include: [`${CONTENTION}/*.test.ts`], maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
