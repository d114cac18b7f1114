// Vite build of the console: a single-page app served by the Signet process at `/` from
// console/dist (see src/http/console-static.ts). Pages are split into their own chunks so the
// first page loads only what it shows; the manifest lets a test measure that first load.
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [vue()],
  resolve: {
    alias: {
      // The runtime-and-compiler build that does not need `eval` (CSP-friendly message compilation).
      'vue-i18n': 'vue-i18n/dist/vue-i18n.esm-bundler.js',
    },
  },
  define: {
    __VUE_OPTIONS_API__: 'false',
    __VUE_PROD_DEVTOOLS__: 'false',
    __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
    __VUE_I18N_FULL_INSTALL__: 'false',
    __VUE_I18N_LEGACY_API__: 'false',
    __INTLIFY_PROD_DEVTOOLS__: 'false',
  },
  // `npx vite` in console/ serves the console with hot reload; API calls go to a local `npm start`.
  server: {
    proxy: { '/v1': 'http://localhost:8080', '/d/': 'http://localhost:8080', '/a/': 'http://localhost:8080' },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    manifest: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
});
