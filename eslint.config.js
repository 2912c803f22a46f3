// Lint rules: typescript-eslint's recommended set, plus the project's determinism and layering rules.
import js from "@eslint/js"
import tseslint from "typescript-eslint"

const clockAndRandomness = {
  "no-restricted-properties": [
    "error",
    { object: "Date", property: "now", message: "Read time from the Clock layer." },
    { object: "Math", property: "random", message: "Use a seeded source (SeededRandom)." },
    { object: "performance", property: "now", message: "Read time from the Clock layer." }
  ],
  "no-restricted-syntax": [
    "error",
    { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "Read time from the Clock layer." }
  ],
  "no-restricted-globals": [
    "error",
    { name: "setTimeout", message: "Sleep through the Clock layer." },
    { name: "setInterval", message: "Schedule through the Clock layer." }
  ]
}

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "ui/dist/", "coverage/", "out/", "test-results/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", Buffer: "readonly", console: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
      "require-yield": "off"
    }
  },
  { files: ["src/Domain/**/*.ts", "src/Engine/**/*.ts", "sim/**/*.ts"], rules: clockAndRandomness },
  {
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^(\\.\\./)+sim/", caseSensitive: true, message: "src/ never imports sim/." }] }
      ]
    }
  }
)
