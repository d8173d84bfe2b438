// The file the owner library starts as the supervisor process: the CLI is skipped so that
// nothing but the supervisor's own modules is loaded.
import { supervisorMain } from './main.js';

supervisorMain(process.argv.slice(2)).then((code) => process.exit(code));
