export { createDemoProvider } from './demo-provider.js';
