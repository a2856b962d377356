import { defineSuite } from './tool_suite.mjs';
import { stdioClient } from './clients.mjs';

defineSuite('stdio', stdioClient);
