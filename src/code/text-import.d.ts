// `import x from "<file>" with { type: "text" }` gives the file's contents (embedded by `bun build --compile`).
declare module "*/bootstrap.js" {
  const text: string;
  export default text;
}
