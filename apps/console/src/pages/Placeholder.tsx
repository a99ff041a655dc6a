export function Placeholder({ title, text, testId }: { title: string; text: string; testId?: string }) {
  return (
    <div className="page" data-testid={testId}>
      <h1>{title}</h1>
      <p>{text}</p>
    </div>
  );
}
