import * as effectEslint from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

// Effect's own setup: typescript-eslint's recommended rules plus dprint formatting with Effect's style.
export default tseslint.config(
  { ignores: ["**/dist/**", "**/build/**", "**/node_modules/**", "**/.sightline/**", "**/*.mjs", "**/test/fixtures/**/*.js"] },
  ...tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }]
    }
  },
  {
    // Core is pure: it must not reach for I/O. Adapters bind it to the world.
    files: ["packages/core/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{
          group: ["node:*", "fs", "path", "http", "https", "net", "child_process", "pg", "pg-*", "@effect/platform*", "@effect/sql*", "@electric-sql/*"],
          message: "@sightline/core does no I/O: put this in an adapter package."
        }]
      }]
    }
  }
)
