// The types of dist/vendor/typescript-parser.cjs, which the build cuts from typescript
// (scripts/build-typescript-parser.mjs): typescript's own API, of which the check calls only the
// parser's part. The build writes this same declaration beside the file.
import ts = require('typescript');
export = ts;
