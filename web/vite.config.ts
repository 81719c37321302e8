import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * The administration screen (issue 20): built into dist/admin and served by
 * the service under /admin/ (src/transport/http/admin-screen.ts). The
 * generated Connect descriptors come straight from src/gen (`@gen/...`), the
 * same files the server uses. Nothing is inlined into index.html: the CSP
 * allows scripts and styles from 'self' only.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/admin/",
  plugins: [react()],
  resolve: {
    alias: { "@gen": fileURLToPath(new URL("../src/gen", import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL("../dist/admin", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // Never a data: or inline script; small images may be data: URIs (img-src allows them).
    assetsInlineLimit: (file) => (/\.(svg|png|gif|webp)$/.test(file) ? undefined : false),
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
    // The largest chunk is the template editor's (CodeMirror, about 570 kB), loaded only when its page opens; the
    // first page's chunks stay well under this.
    chunkSizeWarningLimit: 700,
  },
});
