// Flat config: typescript-eslint recommended for all TS, React hooks rules for the renderer. Import cycles are
// checked by scripts/import-cycles.mjs (type-only imports count), part of `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'out/**',
      'node_modules/**',
      'docs/**',
      'test-results/**',
      'playwright-report/**',
      'release/**',
      '.tmp/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
  },
  {
    // The core must run under plain Node: no Electron anywhere below src/main/core or src/shared.
    files: [
      'src/main/core/**/*.ts',
      'src/shared/**/*.ts',
      'src/main/demo/**/*.ts',
      'src/main/web/**/*.ts',
      'src/main/cli/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'electron', message: 'core is Electron-free; use an injected interface' }] },
      ],
    },
  },
  {
    // The bin shim is plain CommonJS by design: it must run without a build step or a loader.
    files: ['bin/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
