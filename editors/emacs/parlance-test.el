;;; parlance-test.el --- Scenario tests for parlance.el against the real daemon  -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs -Q --batch -L . -l parlance-test.el -f parlance-test-run
;; with PARLANCE_BIN naming the daemon.  Each test drives the commands as a
;; person would (keys in the variants buffer), against the real model.

;;; Code:

(require 'ert)
(require 'parlance)

(defconst parlance-test--lines
  '("Project notes"
    "hey team, the launch slipped to march because the vendor is late again. sorry, we will fix the plan."
    ""
    "Thanks"))

(defconst parlance-test--original (mapconcat #'identity parlance-test--lines "\n"))

(defvar parlance-test--timeout
  (string-to-number (or (getenv "PARLANCE_TEST_TIMEOUT") "240")))

(defun parlance-test--wait (pred &optional timeout)
  "Process events until PRED is non-nil or TIMEOUT seconds pass; return PRED."
  (let ((deadline (+ (float-time) (or timeout parlance-test--timeout))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defun parlance-test--source ()
  "A fresh buffer holding the original text, undo on, set-up its own undo step."
  (let ((buf (get-buffer-create "*parlance-test-source*")))
    (with-current-buffer buf
      (let ((inhibit-read-only t)) (erase-buffer))
      (text-mode)
      (buffer-enable-undo)
      (insert parlance-test--original)
      (undo-boundary)
      (setq buffer-undo-list (cons nil buffer-undo-list)))
    (switch-to-buffer buf)
    buf))

(defun parlance-test--line2 ()
  "Bounds of the second line of the current buffer."
  (save-excursion
    (goto-char (point-min))
    (forward-line 1)
    (list (line-beginning-position) (line-end-position))))

(defun parlance-test--press (buffer key)
  "Run the command bound to KEY in BUFFER, as a key press there would."
  (with-current-buffer buffer
    (let* ((last-command-event (aref (kbd key) (1- (length (kbd key)))))
           (command (key-binding (kbd key))))
      (should (commandp command))
      (call-interactively command))))

(ert-deftest parlance-test-rewrite-pick-undo ()
  "Select a line, rewrite it, pick variant 1 with the key 1, undo restores."
  (let* ((src (parlance-test--source))
         (bounds (parlance-test--line2))
         (s (progn (set-mark (car bounds)) (goto-char (cadr bounds)) (activate-mark)
                   (let ((current-prefix-arg nil))
                     (parlance-rewrite-region (region-beginning) (region-end) "formal"))))
         (variants-buffer (parlance--session-buffer s))
         (streamed-while-running nil))
    (should (buffer-live-p variants-buffer))
    (should (eq (current-buffer) variants-buffer))
    (should (parlance-test--wait
             (lambda ()
               (when (and (not (parlance--session-done s))
                          (string-match-p "^\\[1\\] writing…\n    \\S-"
                                          (with-current-buffer variants-buffer (buffer-string))))
                 (setq streamed-while-running t))
               (parlance--session-done s))))
    (should-not (parlance--session-error s))
    (should (> (parlance--session-deltas s) 0))
    (should streamed-while-running)
    (let ((text (plist-get (car (parlance--session-variants s)) :text)))
      (should (string-match-p "\\S-" text))
      (should (string-match-p (regexp-quote (car (split-string text "\n")))
                              (with-current-buffer variants-buffer (buffer-string))))
      (parlance-test--press variants-buffer "1")
      (should-not (buffer-live-p variants-buffer))
      (with-current-buffer src
        (should (equal (buffer-string)
                       (mapconcat #'identity
                                  (append (list (nth 0 parlance-test--lines) text)
                                          (nthcdr 2 parlance-test--lines))
                                  "\n")))
        (let ((last-command nil)) (undo))
        (should (equal (buffer-string) parlance-test--original))))))

(ert-deftest parlance-test-rewrite-cancel-with-C-g ()
  "C-g in the variants buffer cancels the running request; nothing changes."
  (let* ((src (parlance-test--source))
         (bounds (parlance-test--line2))
         (parlance-variant-count 3)
         (s (parlance-rewrite-region (car bounds) (cadr bounds)))
         (variants-buffer (parlance--session-buffer s)))
    (should (parlance-test--wait (lambda () (or (> (parlance--session-deltas s) 0)
                                                (parlance--session-done s)))))
    (should-not (parlance--session-done s))
    (parlance-test--press variants-buffer "C-g")
    (should (parlance-test--wait (lambda () (parlance--session-done s)) 30))
    (should (parlance--session-cancelled s))
    (should-not (parlance--session-error s))
    (should (string-match-p "Cancelled" (with-current-buffer variants-buffer (buffer-string))))
    (parlance-test--press variants-buffer "q")
    (should-not (buffer-live-p variants-buffer))
    (with-current-buffer src
      (should (equal (buffer-string) parlance-test--original)))))

(ert-deftest parlance-test-quit-cancels ()
  "q while writing closes the buffer and cancels the request."
  (parlance-test--source)
  (let* ((bounds (parlance-test--line2))
         (s (parlance-rewrite-region (car bounds) (cadr bounds) "casual"))
         (variants-buffer (parlance--session-buffer s)))
    (should (parlance-test--wait (lambda () (or (> (parlance--session-deltas s) 0)
                                                (parlance--session-done s)))))
    (parlance-test--press variants-buffer "q")
    (should-not (buffer-live-p variants-buffer))
    (should (parlance-test--wait (lambda () (parlance--session-done s)) 30))
    (should (parlance--session-cancelled s))))

(ert-deftest parlance-test-daemon-error-is-shown ()
  "A JSON-RPC error from the daemon is shown with its message."
  (parlance-test--source)
  (let* ((bounds (parlance-test--line2))
         (s (parlance-rewrite-region (car bounds) (cadr bounds) "no-such-tone")))
    (should (parlance-test--wait (lambda () (parlance--session-done s)) 30))
    (should (stringp (parlance--session-error s)))
    (should (equal parlance-last-error (parlance--session-error s)))
    (parlance-test--press (parlance--session-buffer s) "q")))

(ert-deftest parlance-test-restart-after-crash ()
  "A killed daemon is restarted and the user is told."
  (should (parlance-test--wait (lambda () parlance--ready) 30))
  (let* ((proc (jsonrpc--process parlance--conn))
         (pid (process-id proc)))
    (signal-process proc 'KILL)
    (should (parlance-test--wait
             (lambda () (and parlance--ready (parlance--running-p)
                             (not (eql pid (process-id (jsonrpc--process parlance--conn))))))
             30))
    (should (string-match-p "exited.*restarting" parlance-last-error))))

(ert-deftest parlance-test-summarize ()
  "The summary streams into *parlance summary*."
  (parlance-test--source)
  (let ((s (parlance-summarize-buffer)))
    (should (parlance-test--wait (lambda () (parlance--session-done s))))
    (should-not (parlance--session-error s))
    (should (> (parlance--session-deltas s) 0))
    (let ((summary (plist-get (parlance--session-result s) :summary)))
      (should (string-match-p "\\S-" summary))
      (should (string-match-p (regexp-quote summary)
                              (with-current-buffer (parlance--session-buffer s) (buffer-string)))))
    (parlance-test--press (parlance--session-buffer s) "q")))

(ert-deftest parlance-test-ask ()
  "The answer streams into *parlance answer*."
  (should (parlance-test--wait (lambda () parlance--ready) 30))
  (unless (member "ask/stream" (append (plist-get parlance--capabilities :methods) nil))
    (ert-skip "the daemon has no ask/stream yet"))
  (parlance-test--source)
  (let ((s (parlance-ask "When is the launch now?")))
    (should (parlance-test--wait (lambda () (parlance--session-done s))))
    (should-not (parlance--session-error s))
    (should (string-match-p "\\S-" (parlance--session-answer s)))
    (should (string-match-p "Q: When is the launch now\\?"
                            (with-current-buffer (parlance--session-buffer s) (buffer-string))))
    (parlance-test--press (parlance--session-buffer s) "q")))

(defun parlance-test-run ()
  "Run the tests in order, print \"N passed, N failed\", exit non-zero on failure."
  (setq parlance-program (or (getenv "PARLANCE_BIN") parlance-program)
        parlance-variant-count 1)
  (let* ((stats (ert-run-tests-batch
                 '(member parlance-test-rewrite-pick-undo parlance-test-rewrite-cancel-with-C-g
                          parlance-test-quit-cancels parlance-test-daemon-error-is-shown
                          parlance-test-restart-after-crash parlance-test-summarize parlance-test-ask)))
         (failed (ert-stats-completed-unexpected stats))
         (skipped (ert-stats-skipped stats))
         (passed (- (ert-stats-completed-expected stats) skipped)))
    (parlance-stop)
    (princ (format "%d passed, %d failed, %d skipped\n" passed failed skipped))
    (kill-emacs (if (zerop failed) 0 1))))

(provide 'parlance-test)
;;; parlance-test.el ends here
