export { createCohereProvider } from './cohere-provider.js';
