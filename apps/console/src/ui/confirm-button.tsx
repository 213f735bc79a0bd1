import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A destructive action in two steps: the first press asks, the second (on the button that then
 * takes focus) does it; Cancel or Escape steps back.
 */
export function ConfirmButton(props: {
  label: string;
  /** The question shown before acting: "Delete quota gpt-4o?" */
  question: string;
  confirmLabel: string;
  onConfirm: () => void | Promise<void>;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const askRef = useRef<HTMLButtonElement>(null);
  // Focus follows the step: to the confirm button when asking, back to the first button after a
  // cancel, so a keyboard user never lands on <body>.
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (wasAsking.current) askRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return (
      <button
        type="button"
        class="danger"
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  }
  const act = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <span
      class="confirm"
      role="group"
      aria-label={props.question}
      onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}
    >
      <span>{props.question}</span>
      <button
        type="button"
        class="danger"
        ref={confirmRef}
        disabled={busy}
        onClick={() => void act()}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
