/** Vite's `?raw` imports: a file's text (the tests send sandbox/env's files into the sandbox). */
declare module "*?raw" {
  const text: string;
  export default text;
}
