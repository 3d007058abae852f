// @ts-check
import js from "@eslint/js"
import tseslint from "typescript-eslint"

/**
 * The only files besides repositories that may hold `sql` template tags: the repository kit, SQL
 * builders that name no table and are called only from repositories. Every statement, and every
 * fragment that names a table or a column (the access module's list scopes included), lives in a
 * `*Repo.ts` file.
 */
const sqlOutsideRepositories = [
  // The repository kit: SqlSchema with lazily compiled statements, and `failStale`, the recovery
  // sweep's statement over the table and condition a repository gives.
  "src/Services/Repository.ts",
  // The list kit's builder (ARCHITECTURE "Lists"): wraps a repository's fragments into the count
  // and page statements.
  "src/Services/Lists.ts",
  // Filter expressions over the columns a repository names: search text, person names, days in a zone.
  "src/Services/SqlFilters.ts"
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
