// ESLint flat config. Type-aware rules are left out on purpose: they need a
// full TypeScript program per run, and `npm run typecheck` (tsc) already
// catches what they would; this keeps `npm run lint` fast on CI's 2 cores.
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig([
  globalIgnores([
    "src/gen/**", // buf output, checked by scripts/check-generated.ts instead
    "**/node_modules/**",
    "coverage/**",
    "dist/**",
    ".data/**",
    "bin/**",
  ]),
  js.configs.recommended,
  tseslint.configs.recommended,
  tseslint.configs.strict,
  {
    files: ["**/*.{ts,js,mjs}"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: {
        // Node globals we use; listed rather than pulling in the `globals` package.
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        URLSearchParams: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        fetch: "readonly",
        Response: "readonly",
        Request: "readonly",
        Headers: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        clearImmediate: "readonly",
        queueMicrotask: "readonly",
        structuredClone: "readonly",
        performance: "readonly",
        crypto: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
        },
      ],
      // Only erasable TypeScript (Node runs our .ts files by stripping types).
      "no-restricted-syntax": [
        "error",
        { selector: "TSEnumDeclaration", message: "Enums are not erasable syntax; use a const object and a union type." },
        { selector: "TSModuleDeclaration[kind!='global'][declare!=true]", message: "Namespaces are not erasable syntax." },
        { selector: "TSParameterProperty", message: "Parameter properties are not erasable syntax." },
        { selector: "Decorator", message: "Decorators are not supported by Node's type stripping." },
      ],
    },
  },
]);
