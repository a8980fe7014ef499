/** An error message, announced to screen readers; renders nothing without a message. */
export function ErrorBanner({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <div class="error-banner" role="alert" data-testid="error-banner">
      {message}
    </div>
  );
}
