// Lint and format check (`npm run lint`): typescript-eslint's recommended rules and Effect's dprint formatter rule,
// configured to the style the code already has (no semicolons, double quotes, 2-space indent, no trailing commas).
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "packages/console/web/dist/**", "**/*.js", "**/*.mjs"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.tsx"],
    plugins: { "@effect": effect },
    rules: {
      // Effect's schema idiom: `interface X extends Schema.Schema.Type<typeof X> {}` names the decoded type.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // A leading underscore marks a binding that is unused on purpose (the rest of a destructuring, a callback slot).
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrorsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_",
        ignoreRestSiblings: true
      }],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 160,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          "functionExpression.spaceAfterFunctionKeyword": true,
          "module.sortImportDeclarations": "maintain",
          "importDeclaration.sortNamedImports": "maintain",
          "exportDeclaration.sortNamedExports": "maintain"
        }
      }]
    }
  },
  {
    // dprint drops the comma of a TSX generic arrow (`<T,>(...) =>`), which then parses as JSX.
    files: ["**/*.tsx"],
    rules: { "@effect/dprint": "off" }
  },
  {
    // Tests read untyped answers (JSON bodies, raw objects of the dev API server) with `as any` on purpose.
    files: ["packages/*/test/**", "packages/*/journeys/**", "packages/*/scenarios/**", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
