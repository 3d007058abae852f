// @ts-check
import js from "@eslint/js"
import tseslint from "typescript-eslint"

/**
 * The only files besides repositories that may hold `sql` template tags: builders of fragments
 * that repositories apply. Every service's statements live in its area's `*Repo.ts` files.
 */
const sqlOutsideRepositories = [
  // Builders of SQL fragments that repositories apply, not statements: the access module's list
  // scopes (ARCHITECTURE "Access"), and the shared filter expressions (search text, names, days in a zone).
  "src/Services/Access/Scopes.ts",
  "src/Services/SqlFilters.ts",
  // The list kit's builder (ARCHITECTURE "Lists"): it wraps a repository's fragments into the
  // count and page statements; it names no table and is called only from repositories.
  "src/Services/Lists.ts",
  // The repository kit: its sweep statement (`failStale`) wraps a repository's fragments the same
  // way, naming no table; the sweeps' one condition on the job queue (`jobCanNoLongerRun`) is a
  // fragment they apply. Called only from repositories.
  "src/Services/Repository.ts"
]

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
    // Only repositories hold SQL (ARCHITECTURE "Persistence"): services call their methods.
    files: ["src/Services/**/*.ts"],
    ignores: ["src/Services/**/*Repo.ts", ...sqlOutsideRepositories],
    rules: {
      "no-restricted-syntax": ["error", {
        selector: "TaggedTemplateExpression[tag.name='sql']",
        message: "SQL belongs in a repository (src/Services/<Area>/<Table>Repo.ts) as SqlSchema statements; call its methods here."
      }]
    }
  },
  {
    // Statements compile their schemas on first run (SqlSchema in src/Services/Repository.ts), not at start-up.
    files: ["src/Services/**/*.ts", "src/Layers/**/*.ts"],
    ignores: ["src/Services/Repository.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "@effect/sql", importNames: ["SqlSchema"], message: "Use SqlSchema from src/Services/Repository.ts: it compiles a statement's schemas on its first run." }]
      }]
    }
  },
  {
    files: ["bench/**/*.ts", "test/**/*.ts", "src/main.ts", "scripts/**"],
    rules: { "no-console": "off" }
  }
)
