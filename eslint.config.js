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
    // The dev servers and the laptop platform are for tests and `npm start` only: production code never reaches them,
    // so a token-minting dev issuer can never ship in the image.
    files: ["packages/{core,gateway,agent,storage,signals,console,operator}/src/**/*.{ts,tsx}", "packages/console/web/src/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [{
          group: ["@kubemend/devkit", "@kubemend/devkit/*", "@kubemend/local", "@kubemend/local/*", "**/devkit/**", "**/local/src/**"],
          message: "production code must not import the devkit or the local platform (tests and packages/local only)"
        }]
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
