// CSS files imported as text (build.mjs: loader "text").
declare module "*.css" {
  const text: string;
  export default text;
}
