import { useEffect, useState } from 'preact/hooks';

/** The page's location hash, kept current across `hashchange` (links are plain `href="#/…"`). */
export function useHashLocation(): string {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const update = () => setHash(location.hash);
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return hash;
}
