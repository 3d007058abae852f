// @ts-check
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/", ".data/", "coverage/", "dist/", "packages/*/dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "require-yield": "off",
      "no-console": "error",
      // TypeScript checks names; plain .mjs scripts run on Node.
      "no-undef": "off"
    }
  },
  {
    // The Api is the client-safe package entry (`./api`): frontends import it, so it may only
    // depend on effect, @effect/platform and src/Domain.
    files: ["src/Api/**/*.ts", "src/Domain/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { regex: "^(?!effect(/|$)|@effect/platform(/|$)|libphonenumber-js(/|$)|\\.\\.?/)", message: "src/Api and src/Domain may import only effect, @effect/platform, libphonenumber-js and relative modules." },
          { regex: "(^|/)(Layers|Services)(/|$)", message: "src/Api must not import server-side modules." },
          { regex: "^@effect/platform-", message: "src/Api must not import platform-specific packages." }
        ]
      }]
    }
  },
  {
    files: ["bench/**/*.ts", "test/**/*.ts", "src/main.ts", "scripts/**"],
    rules: { "no-console": "off" }
  }
)
