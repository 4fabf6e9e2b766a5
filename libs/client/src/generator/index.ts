/** The SDK generator as a library: `generate(ontology)` gives the files, `main(args)` is the command line. */
export { generate, RUNTIME_PACKAGE, RUNTIME_VERSION } from './generate.js';
export type { GenerateOptions, OntologyVersion } from './generate.js';
export { main } from './cli.js';
