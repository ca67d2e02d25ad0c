import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    env: {
      // the service imports msgpackr's subpaths, which never load the native string extractor;
      // tests import the main entry, which would switch it on for the app under test too
      MSGPACKR_NATIVE_ACCELERATION_DISABLED: 'true',
    },
  },
});
