// ESLint flat config. Type-aware rules are left out on purpose: they need a
// full TypeScript program per run, and `npm run typecheck` (tsc) already
// catches what they would; this keeps `npm run lint` fast on CI's 2 cores.
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import tseslint from "typescript-eslint";

/** Only erasable TypeScript (Node runs our .ts files by stripping types). */
const ERASABLE_SYNTAX_ONLY = [
  { selector: "TSEnumDeclaration", message: "Enums are not erasable syntax; use a const object and a union type." },
  { selector: "TSModuleDeclaration[kind!='global'][declare!=true]", message: "Namespaces are not erasable syntax." },
  { selector: "TSParameterProperty", message: "Parameter properties are not erasable syntax." },
  { selector: "Decorator", message: "Decorators are not supported by Node's type stripping." },
];

/** `describe.only`, `it.only`, `test.each(...).only`, `it.concurrent.only`, ...: any `.only` in a test file. */
const NO_FOCUSED_TESTS = [
  {
    selector: "MemberExpression[property.name='only']",
    message: "No focused tests: `.only` would silently run this test alone. Run one file with `npx vitest run <file> -t <name>` instead.",
  },
];

export default defineConfig([
  globalIgnores([
    "src/gen/**", // buf output, checked by scripts/check-generated.ts instead
    "clients/typescript/src/gen/**", // the same, for the TypeScript client
    "clients/typescript/dist/**", // the client's build (npm run clients:build)
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
      "no-restricted-syntax": ["error", ...ERASABLE_SYNTAX_ONLY],
    },
  },
  // A stray `.only` would shrink the suite to one test without failing it
  // (vitest refuses `.only` itself only when CI is set). The rule repeats the
  // erasable-syntax selectors: a later `no-restricted-syntax` replaces them.
  // test/lint/focused-tests.test.ts proves it bites.
  {
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "no-restricted-syntax": ["error", ...ERASABLE_SYNTAX_ONLY, ...NO_FOCUSED_TESTS],
    },
  },
  // The arrows of the house (docs/architecture.md): transport -> capabilities
  // <- adapters, wired in src/wiring. Capabilities hold rules, use cases and
  // ports, so they import no framework, driver or SDK, and nothing from the
  // layers around them; transport never reaches past the capabilities into
  // the adapters; workflows stay deterministic. test/lint/boundaries.test.ts
  // proves each rule bites.
  {
    files: ["src/capabilities/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["fastify", "fastify/*", "@fastify/*", "@connectrpc/*", "@temporalio/*", "nodemailer", "nodemailer/*", "pg", "pg/*", "@mikro-orm/*"],
              message: "Capabilities hold rules and ports only: put I/O in an adapter (src/adapters) behind a port.",
            },
            {
              group: ["**/adapters/**", "**/transport/**", "**/wiring/**", "**/runtime/**", "**/workflows/**", "**/config.ts"],
              message: "Capabilities import no outer layer: declare a port and let src/wiring pass the adapter.",
            },
            {
              group: ["**/gen/**", "@bufbuild/*"],
              message: "Capabilities speak their own types: proto types live in src/transport (one mapping module per service); contract facts come from src/contract.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/adapters/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/transport/**", "**/wiring/**", "fastify", "@fastify/*", "@connectrpc/*"],
              message: "Adapters implement ports of the capabilities; they never call the transport or the composition root.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/transport/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/adapters/**", "**/wiring/**", "@temporalio/*", "pg", "@mikro-orm/*", "nodemailer"],
              message: "Transport calls capabilities (use cases and ports), never adapters: src/wiring connects them.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["workflows/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/src/**"],
              message: "Workflows own their activity interfaces (workflows/<name>/activities.ts) and import nothing from src: the adapters implement them.",
            },
            {
              group: ["@temporalio/*", "!@temporalio/workflow", "!@temporalio/common"],
              message: "Workflows import only @temporalio/workflow (and @temporalio/common for search attribute keys).",
            },
          ],
        },
      ],
    },
  },
  // The administration screen (web/, built by Vite, run in the browser): it
  // talks to the service over the contract only (the generated descriptors,
  // `@gen/...`); from src it may share a pure declaration of a capability
  // (a list of names), never a server layer or a Node module.
  {
    files: ["web/src/**/*.{ts,tsx}"],
    languageOptions: {
      globals: {
        window: "readonly",
        document: "readonly",
        navigator: "readonly",
        location: "readonly",
        history: "readonly",
        IntersectionObserver: "readonly",
        FormData: "readonly",
        HTMLElement: "readonly",
        HTMLButtonElement: "readonly",
        HTMLFormElement: "readonly",
        HTMLInputElement: "readonly",
      },
    },
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/src/adapters/**", "**/src/transport/**", "**/src/wiring/**", "**/src/runtime/**", "**/src/cli/**", "**/src/config*", "node:*", "fastify", "@fastify/*", "pg"],
              message: "The screen runs in the browser and uses the contract: import generated descriptors as `@gen/mail/v1/..._pb.js`, never server code.",
            },
          ],
        },
      ],
    },
  },
]);
