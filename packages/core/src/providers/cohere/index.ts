export { type CohereProviderOptions, createCohereProvider } from './cohere-provider.js';
