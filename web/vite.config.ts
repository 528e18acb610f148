import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The console is built into dist/web beside the server's own build; the server serves it at `/`.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // The CSP allows no inline script or style: keep every asset a file, never a data: URL.
    assetsInlineLimit: 0,
    sourcemap: true,
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `npm run dev:web` proxies the API to a server started with `npm start`.
    proxy: { '/v1': 'http://127.0.0.1:8080' },
  },
});
