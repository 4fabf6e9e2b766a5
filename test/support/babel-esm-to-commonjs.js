// Babel plugin used by jest.config.js before @babel/plugin-transform-modules-commonjs, for the
// ES-module-only packages Jest compiles to CommonJS. An ES module may declare its own top-level
// `require` (typically `const require = createRequire(import.meta.url)`), or `module`,
// `exports`, `__filename`, `__dirname`: names that are free in an ES module but are the CommonJS
// wrapper's parameters once compiled, where the compiled `require("…")` calls would then hit the
// module's own binding. Renaming those bindings keeps both meanings apart.
const WRAPPER_NAMES = ['require', 'module', 'exports', '__filename', '__dirname'];

module.exports = function esmToCommonJs() {
  return {
    name: 'esm-to-commonjs-wrapper-names',
    visitor: {
      Program(path) {
        for (const name of WRAPPER_NAMES) {
          if (path.scope.hasOwnBinding(name)) path.scope.rename(name, path.scope.generateUid(name));
        }
      },
    },
  };
};
