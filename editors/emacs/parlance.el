;;; parlance.el --- Rewrite, summarize and ask with a local language model  -*- lexical-binding: t; -*-

;; Copyright (C) 2025 The Parlance authors

;; Author: The Parlance authors
;; Maintainer: The Parlance authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (jsonrpc "1.0.9"))
;; Keywords: convenience, wp, tools

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; A client for Parlance, a local language-model daemon that speaks
;; JSON-RPC 2.0 over stdio.  It uses only Emacs's built-in jsonrpc.el.
;;
;;   M-x parlance-rewrite-region   rewrite the region into tone variants;
;;                                 they stream into *parlance variants*,
;;                                 where 1-9 or RET replaces the region
;;                                 (one undo step) and C-g or q cancels.
;;   M-x parlance-summarize-buffer summarize the buffer (or the region).
;;   M-x parlance-ask              ask a question about the buffer.
;;
;; With a prefix argument, `parlance-rewrite-region' asks for the tone.
;; The daemon is started on first use, restarted if it dies, and never
;; waited for: every request is asynchronous.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)

(defgroup parlance nil
  "Rewrite, summarize and ask with the local Parlance daemon."
  :group 'tools
  :prefix "parlance-")

(defcustom parlance-program (or (getenv "PARLANCE_BIN") "parlance")
  "The Parlance daemon executable: a file, or a name on the variable `exec-path'."
  :type 'string)

(defcustom parlance-model nil
  "A GGUF model file for the daemon, or nil for the daemon's default model."
  :type '(choice (const :tag "Daemon default" nil) file))

(defcustom parlance-extra-args nil
  "Extra command-line arguments for the daemon, e.g. (\"--threads\" \"4\")."
  :type '(repeat string))

(defcustom parlance-default-tone nil
  "Tone used by `parlance-rewrite-region', or nil for the daemon's choice.
A string may name several tones separated by commas."
  :type '(choice (const :tag "Daemon default" nil) string))

(defcustom parlance-tones '("formal" "casual" "empathetic" "direct" "diplomatic")
  "Tones offered for completion (the daemon's own list replaces it)."
  :type '(repeat string))

(defcustom parlance-audience nil
  "Audience for rewrites (executive, peer, client, team, public) or nil."
  :type '(choice (const :tag "Any" nil) string))

(defcustom parlance-variant-count nil
  "How many variants to ask for, or nil for the daemon's default."
  :type '(choice (const :tag "Daemon default" nil) integer))

(defcustom parlance-instructions nil
  "Extra instructions passed with every rewrite, or nil."
  :type '(choice (const :tag "None" nil) string))

(defcustom parlance-events-buffer-size 0
  "Size of the jsonrpc events log buffer; 0 disables it, nil is unbounded."
  :type '(choice (const :tag "Unbounded" nil) integer))

(defcustom parlance-max-restarts 3
  "Restart a crashed daemon at most this many times a minute."
  :type 'integer)

(defvar parlance-last-error nil
  "The last error message shown by Parlance.")

(defconst parlance--cancelled -32800
  "The JSON-RPC error code of a cancelled request.")

;;;; The daemon

(defvar parlance--conn nil "The live `jsonrpc-process-connection', or nil.")
(defvar parlance--ready nil "Non-nil once the daemon answered initialize.")
(defvar parlance--queue nil "Requests made before initialize answered.")
(defvar parlance--stopping nil "Non-nil when the daemon was asked to exit.")
(defvar parlance--restarts nil "Times of recent automatic restarts.")
(defvar parlance--capabilities nil "The daemon's capabilities (a plist).")
(defvar parlance--progress (make-hash-table :test #'equal)
  "Map a workDoneToken to the function handling its progress values.")
(defvar parlance--docs (make-hash-table :test #'equal)
  "Map a document uri to the buffer text last sent to the daemon.")
(defvar parlance--token-seq 0 "Counter for workDoneTokens.")

(cl-defstruct (parlance--req (:constructor parlance--req-create))
  "An asynchronous request."
  method params id conn done cancelled on-result on-error)

(defun parlance--error (format-string &rest args)
  "Show an error built from FORMAT-STRING and ARGS and remember it."
  (let ((msg (apply #'format format-string args)))
    (setq parlance-last-error msg)
    (message "%s" (propertize (concat "Parlance: " msg) 'face 'error))))

(defun parlance--running-p ()
  "Non-nil when the daemon is running."
  (and parlance--conn (jsonrpc-running-p parlance--conn)))

(defun parlance--command ()
  "The daemon's command line."
  (let ((program (executable-find parlance-program)))
    (unless program
      (user-error "Parlance: daemon not found: %s (customize `parlance-program')"
                  parlance-program))
    (append (list program "--stdio")
            (and parlance-model (list "--model" (expand-file-name parlance-model)))
            parlance-extra-args)))

(defun parlance--start ()
  "Start the daemon unless it is running; send initialize."
  (unless (parlance--running-p)
    (let* ((command (parlance--command))
           (default-directory (expand-file-name "~/"))
           (conn (jsonrpc-process-connection
                  :name "parlance"
                  :events-buffer-scrollback-size parlance-events-buffer-size
                  :notification-dispatcher #'parlance--on-notification
                  :request-dispatcher #'parlance--on-request
                  :on-shutdown #'parlance--on-exit
                  :process (lambda ()
                             (make-process
                              :name "parlance" :command command
                              :connection-type 'pipe :coding 'utf-8-emacs-unix
                              :noquery t
                              :stderr (get-buffer-create "*parlance stderr*"))))))
      (setq parlance--conn conn
            parlance--ready nil
            parlance--stopping nil
            parlance--capabilities nil)
      (clrhash parlance--docs)
      (jsonrpc-async-request
       conn 'initialize
       (list :processId (emacs-pid)
             :clientInfo (list :name "parlance.el" :version "0.1.0")
             :capabilities (list :window (list :workDoneProgress t)))
       :timeout nil
       :success-fn (lambda (result)
                     (when (eq conn parlance--conn)
                       (setq parlance--capabilities (plist-get result :capabilities)
                             parlance--ready t)
                       (jsonrpc-notify conn 'initialized (make-hash-table))
                       (let ((queued parlance--queue))
                         (setq parlance--queue nil)
                         (mapc #'parlance--send queued))))
       :error-fn (lambda (err)
                   (when (eq conn parlance--conn)
                     (parlance--error "Initialize failed: %s" (plist-get err :message))))))))

(defun parlance--on-exit (conn)
  "Handle the exit of CONN's daemon: fail queued work, restart, tell the user."
  (when (eq conn parlance--conn)
    (let ((status (process-exit-status (jsonrpc--process conn)))
          (queued parlance--queue)
          (now (float-time)))
      (setq parlance--conn nil parlance--ready nil parlance--queue nil)
      (dolist (req queued)
        (parlance--finish req nil (list :code -32099 :message "the daemon exited")))
      (unless parlance--stopping
        (setq parlance--restarts
              (cl-remove-if (lambda (time) (> (- now time) 60)) parlance--restarts))
        (if (>= (length parlance--restarts) parlance-max-restarts)
            (parlance--error "The daemon exited (status %s); not restarting it again \
\(%d restarts in a minute): M-x parlance-restart" status (length parlance--restarts))
          (push now parlance--restarts)
          (parlance--error "The daemon exited (status %s); restarting it" status)
          (run-at-time 0 nil (lambda ()
                               (condition-case err
                                   (parlance--start)
                                 (error (parlance--error "Restart failed: %s"
                                                         (error-message-string err)))))))))))

(defun parlance--on-notification (_conn method params)
  "Dispatch the notification METHOD with PARAMS."
  (when (eq method '$/progress)
    (let ((handler (gethash (plist-get params :token) parlance--progress)))
      (when handler
        (funcall handler (plist-get params :value))))))

(defun parlance--on-request (_conn method _params)
  "Answer the server's request METHOD: this client implements none."
  (jsonrpc-error :code -32601 :message (format "%s: not supported by parlance.el" method)))

(defun parlance--request (method params on-result on-error)
  "Send METHOD (a string) with PARAMS; call ON-RESULT or ON-ERROR later.
Return the request, for `parlance--cancel'."
  (let ((req (parlance--req-create :method method :params params
                                   :on-result on-result :on-error on-error)))
    (parlance--start)
    (if parlance--ready
        (parlance--send req)
      (setq parlance--queue (append parlance--queue (list req))))
    req))

(defun parlance--send (req)
  "Send REQ to the daemon."
  (if (parlance--req-cancelled req)
      (parlance--finish req nil (list :code parlance--cancelled :message "cancelled"))
    (let* ((conn parlance--conn)
           (sent (jsonrpc-async-request
                  conn (intern (parlance--req-method req)) (parlance--req-params req)
                  :timeout nil
                  :success-fn (lambda (result) (parlance--finish req result nil))
                  :error-fn (lambda (err) (parlance--finish req nil err)))))
      (setf (parlance--req-conn req) conn
            (parlance--req-id req) (if (and (consp sent) (integerp (car sent)))
                                       (car sent)
                                     ;; jsonrpc.el before 1.0.17 returns nil
                                     (jsonrpc--next-request-id conn))))))

(defun parlance--finish (req result err)
  "Complete REQ with RESULT or ERR, once."
  (unless (parlance--req-done req)
    (setf (parlance--req-done req) t)
    (if err
        (funcall (parlance--req-on-error req) err)
      (funcall (parlance--req-on-result req) result))))

(defun parlance--cancel (req)
  "Ask the daemon to cancel REQ; its error callback then sees -32800."
  (when (and req (not (parlance--req-done req)) (not (parlance--req-cancelled req)))
    (setf (parlance--req-cancelled req) t)
    (let ((conn (parlance--req-conn req)))
      (when (and conn (eq conn parlance--conn) (jsonrpc-running-p conn))
        (jsonrpc-notify conn '$/cancelRequest (list :id (parlance--req-id req)))))))

(defun parlance--new-token (handler)
  "Register HANDLER for a new workDoneToken and return the token."
  (let ((token (format "parlance.el-%d-%d" (emacs-pid) (cl-incf parlance--token-seq))))
    (puthash token handler parlance--progress)
    token))

(defun parlance--cancelled-p (err)
  "Non-nil when ERR is the error of a cancelled request."
  (eql (plist-get err :code) parlance--cancelled))

(defun parlance-stop ()
  "Stop the daemon (shutdown, then exit)."
  (interactive)
  (when (parlance--running-p)
    (let ((conn parlance--conn))
      (setq parlance--stopping t)
      (ignore-errors (jsonrpc-request conn 'shutdown (make-hash-table) :timeout 2))
      (ignore-errors (jsonrpc-notify conn 'exit (make-hash-table)))
      (run-at-time 2 nil (lambda ()
                           (let ((proc (jsonrpc--process conn)))
                             (when (process-live-p proc) (delete-process proc))))))))

(defun parlance-restart ()
  "Restart the daemon."
  (interactive)
  (parlance-stop)
  (setq parlance--conn nil parlance--restarts nil)
  (parlance--start)
  (message "Parlance: daemon restarted"))

(defun parlance-status ()
  "Describe the daemon's state."
  (interactive)
  (message "Parlance: %s%s"
           (cond ((not (parlance--running-p)) "stopped")
                 (parlance--ready "ready")
                 (t "starting"))
           (if (parlance--running-p)
               (format ", pid %s" (process-id (jsonrpc--process parlance--conn)))
             "")))

(add-hook 'kill-emacs-hook (lambda () (when (parlance--running-p) (parlance-stop))))

;;;; Sessions and their buffers

(cl-defstruct (parlance--session (:constructor parlance--session-create))
  "One command's request and what it streamed."
  kind req token buffer done cancelled error (deltas 0) phase
  ;; rewrite
  source beg end original (order nil) (texts nil) variants
  ;; summary, answer
  partial result question answer)

(defvar parlance--sessions nil "Alist of (KIND . session), KIND a symbol.")

(defun parlance--session (kind)
  "The current session of KIND (`variants', `summary' or `answer')."
  (alist-get kind parlance--sessions))

(defun parlance--new-session (kind &rest slots)
  "Start a session of KIND with SLOTS, cancelling the previous one."
  (let ((old (parlance--session kind)))
    (when old (parlance--cancel (parlance--session-req old))))
  (let ((s (apply #'parlance--session-create :kind kind slots)))
    (setf (alist-get kind parlance--sessions) s)
    s))

(defun parlance--finish-session (s result err)
  "Record RESULT or ERR in session S; report errors."
  (setf (parlance--session-done s) t)
  (remhash (parlance--session-token s) parlance--progress)
  (cond ((null err) (setf (parlance--session-result s) result))
        ((parlance--cancelled-p err) (setf (parlance--session-cancelled s) t))
        (t (setf (parlance--session-error s) (or (plist-get err :message) (format "%S" err)))
           (parlance--error "%s" (parlance--session-error s)))))

(defun parlance--partial-field (value field)
  "FIELD of the structured output parsed so far in progress VALUE, if a string."
  (let* ((partial (plist-get value :partial))
         (text (and (consp partial) (plist-get partial field))))
    (and (stringp text) text)))

(defvar parlance-output-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "q") #'parlance-quit)
    (define-key map (kbd "C-g") #'parlance-cancel)
    map)
  "Keymap for Parlance's output buffers.")

(define-derived-mode parlance-output-mode special-mode "Parlance"
  "Major mode of the buffers that show what Parlance streams.
\\<parlance-output-mode-map>\\[parlance-cancel] cancels the request, \\[parlance-quit] cancels and closes."
  (setq-local truncate-lines nil)
  (visual-line-mode 1)
  (add-hook 'kill-buffer-hook #'parlance--cancel-buffer-session nil t))

(defvar-local parlance--kind nil "The session kind shown in this buffer.")

(defun parlance--cancel-buffer-session ()
  "Cancel the request of the session shown in the current buffer."
  (let ((s (and parlance--kind (parlance--session parlance--kind))))
    (when (and s (eq (parlance--session-buffer s) (current-buffer)))
      (parlance--cancel (parlance--session-req s)))))

(defun parlance-cancel ()
  "Cancel the running request shown in this buffer (or every running one)."
  (interactive)
  (let* ((here (and parlance--kind (parlance--session parlance--kind)))
         (sessions (if here (list here) (mapcar #'cdr parlance--sessions)))
         (running (cl-remove-if #'parlance--session-done sessions)))
    (mapc (lambda (s) (parlance--cancel (parlance--session-req s))) running)
    (message "Parlance: %s" (if running "cancelling" "nothing to cancel"))))

(defun parlance-quit ()
  "Cancel the request shown in this buffer, if running, and close the buffer."
  (interactive)
  (parlance--cancel-buffer-session)
  (quit-window t))

(defun parlance--show (kind name)
  "Show the output buffer NAME for session KIND, select it, return it."
  (let ((buf (get-buffer-create name)))
    (with-current-buffer buf
      (unless (derived-mode-p 'parlance-output-mode)
        (if (eq kind 'variants) (parlance-variants-mode) (parlance-output-mode)))
      (setq parlance--kind kind))
    (pop-to-buffer buf '((display-buffer-reuse-window display-buffer-at-bottom)
                         (window-height . 14)))
    buf))

(defun parlance--render (s lines-fn)
  "Redraw session S's buffer with LINES-FN, keeping point's line."
  (let ((buf (parlance--session-buffer s)))
    ;; A replaced session (a new command of the same kind) no longer owns the buffer.
    (when (and (buffer-live-p buf) (eq s (parlance--session (parlance--session-kind s))))
      (with-current-buffer buf
        (let ((inhibit-read-only t)
              (line (line-number-at-pos))
              (col (current-column)))
          (erase-buffer)
          (funcall lines-fn s)
          (set-buffer-modified-p nil)
          (goto-char (point-min))
          (forward-line (1- line))
          (move-to-column col))))))

(defun parlance--head (s writing done)
  "Heading for session S: WRITING while running, DONE after."
  (propertize
   (cond ((not (parlance--session-done s))
          (format "%s%s…   C-g cancels\n\n" writing
                  (if (parlance--session-phase s)
                      (format " (%s)" (parlance--session-phase s)) "")))
         ((parlance--session-error s)
          (format "Failed: %s   q closes\n\n" (parlance--session-error s)))
         ((parlance--session-cancelled s) "Cancelled.   q closes\n\n")
         (t (concat done "\n\n")))
   'face 'bold))

(defun parlance--note-phase (s value)
  "Remember the phase in progress VALUE for session S."
  (let ((phase (plist-get value :phase)))
    (when (stringp phase) (setf (parlance--session-phase s) phase))))

;;;; Rewrite

(defvar parlance-variants-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map parlance-output-mode-map)
    (define-key map (kbd "RET") #'parlance-pick-variant)
    (dotimes (i 9)
      (define-key map (kbd (number-to-string (1+ i))) #'parlance-pick-variant))
    (define-key map (kbd "n") #'parlance-next-variant)
    (define-key map (kbd "p") #'parlance-previous-variant)
    map)
  "Keymap for the *parlance variants* buffer.")

(define-derived-mode parlance-variants-mode parlance-output-mode "Parlance-Variants"
  "Major mode of the buffer listing rewrite variants as they stream.
\\<parlance-variants-mode-map>\\[parlance-pick-variant] on a variant, or its number, replaces the \
region with it;
\\[parlance-cancel] cancels the request; \\[parlance-quit] cancels and closes.")

(defun parlance--tones ()
  "Tones for completion."
  (let ((tones (plist-get parlance--capabilities :tones)))
    (if (and tones (> (length tones) 0)) (append tones nil) parlance-tones)))

(defun parlance--region-or-paragraph ()
  "The active region, or the paragraph at point, as (BEG END)."
  (if (use-region-p)
      (list (region-beginning) (region-end))
    (save-excursion
      (let ((end (progn (forward-paragraph) (skip-chars-backward " \t\n") (point)))
            (beg (progn (backward-paragraph) (skip-chars-forward " \t\n") (point))))
        (list beg end)))))

;;;###autoload
(defun parlance-rewrite-region (beg end &optional tone)
  "Rewrite the text between BEG and END into tone variants.
Interactively, the region (or the paragraph at point).  TONE is a tone
name, or several separated by commas; with a prefix argument, ask for
it; otherwise use `parlance-default-tone'.  The variants stream into
*parlance variants*, where a number or RET replaces the text (one
undo step) and \\<parlance-variants-mode-map>\\[parlance-cancel] cancels."
  (interactive
   (append (parlance--region-or-paragraph)
           (list (and current-prefix-arg
                      (completing-read "Tone: " (parlance--tones) nil nil)))))
  (let ((text (buffer-substring-no-properties beg end))
        (tone (if (and tone (not (string-empty-p tone))) tone parlance-default-tone)))
    (when (string-blank-p text)
      (user-error "Parlance: nothing to rewrite"))
    (let* ((s (parlance--new-session
               'variants
               :source (current-buffer) :beg (copy-marker beg) :end (copy-marker end t)
               :original text))
           (token (parlance--new-token (lambda (value) (parlance--rewrite-progress s value))))
           (params (append (list :text text :workDoneToken token)
                           (and tone (list :tones (vconcat (split-string tone "[, ]+" t))))
                           (and parlance-audience (list :audience parlance-audience))
                           (and parlance-variant-count (list :count parlance-variant-count))
                           (and parlance-instructions (list :instructions parlance-instructions)))))
      (setf (parlance--session-token s) token
            (parlance--session-buffer s) (parlance--show 'variants "*parlance variants*"))
      (parlance--render s #'parlance--insert-variants)
      (setf (parlance--session-req s)
            (parlance--request "compose/variations" params
                               (lambda (result) (parlance--rewrite-done s result nil))
                               (lambda (err) (parlance--rewrite-done s nil err))))
      s)))

(defun parlance--rewrite-progress (s value)
  "Add the streamed text in progress VALUE to session S.
Deltas are tagged with their variation's id in `part'; a report in phase
\"done\" carries the finished variation in `partial'."
  (unless (parlance--session-done s)
    (parlance--note-phase s value)
    (let* ((delta (plist-get value :delta))
           (part (plist-get value :part))
           (key (if (stringp part) part (format "%s" (or part ""))))
           (partial (plist-get value :partial))
           (finished (and (equal (plist-get value :phase) "done") (consp partial)
                          (stringp (plist-get partial :text)) partial)))
      (unless (member key '("analysis" "prefix"))
        (when (or finished (and (stringp delta) (not (string-empty-p delta))))
          (let ((cell (assoc key (parlance--session-texts s))))
            (unless cell
              (setq cell (list key "" nil))
              (setf (parlance--session-texts s)
                    (append (parlance--session-texts s) (list cell))))
            (if finished
                (setcdr cell (list (plist-get finished :text) finished))
              (setcar (cdr cell) (concat (cadr cell) delta))
              (cl-incf (parlance--session-deltas s)))))))
    (parlance--render s #'parlance--insert-variants)))

(defun parlance--rewrite-done (s result err)
  "Session S ended with RESULT or ERR."
  (parlance--finish-session s result err)
  (when result
    (setf (parlance--session-variants s) (append (plist-get result :variations) nil)))
  (parlance--render s #'parlance--insert-variants)
  (let ((n (length (parlance--session-variants s))))
    (cond ((and result (zerop n)) (parlance--error "The daemon returned no variants"))
          (result (message "Parlance: %d variant%s: 1-%d or RET replaces the text, q closes"
                           n (if (= n 1) "" "s") n))
          ((parlance--session-cancelled s) (message "Parlance: rewrite cancelled")))))

(defun parlance--variant-title (v)
  "A one-line description of variant V."
  (string-join
   (delq nil (list (plist-get v :tone) (plist-get v :audience)
                   (let ((f (plist-get v :formalityScore)))
                     (and (numberp f) (format "formality %.2f" f)))))
   ", "))

(defun parlance--insert-variants (s)
  "Insert session S's variants (final or streaming) in the current buffer."
  (insert (parlance--head s "Writing variants"
                          "Variants: a number or RET replaces the text (one undo step), q closes"))
  (let ((entries (if (parlance--session-variants s)
                     (mapcar (lambda (v) (cons (parlance--variant-title v) (plist-get v :text)))
                             (parlance--session-variants s))
                   (mapcar (lambda (cell)
                             (cons (if (nth 2 cell)
                                       (concat (parlance--variant-title (nth 2 cell)) " (done)")
                                     "writing…")
                                   (nth 1 cell)))
                           (parlance--session-texts s))))
        (i 0))
    (dolist (entry entries)
      (let ((start (point)))
        (insert (propertize (format "[%d] %s\n" (1+ i) (car entry)) 'face 'font-lock-keyword-face))
        (insert (replace-regexp-in-string "^" "    " (or (cdr entry) "")) "\n\n")
        (put-text-property start (point) 'parlance-variant i))
      (cl-incf i))))

(defun parlance-pick-variant (&optional n)
  "Replace the rewritten text with variant N (1-based).
Interactively, the number typed, or the variant at point."
  (interactive
   (list (let ((key (and (characterp last-command-event) last-command-event)))
           (if (and key (<= ?1 key ?9)) (- key ?0)
             (let ((i (get-text-property (point) 'parlance-variant)))
               (and i (1+ i)))))))
  (let* ((s (parlance--session 'variants))
         (variants (and s (parlance--session-variants s))))
    (cond ((or (null s) (and (parlance--session-done s) (null variants)))
           (user-error "Parlance: no variants to pick from"))
          ((not (parlance--session-done s))
           (user-error "Parlance: still writing; wait for the variants to finish"))
          ((or (null n) (< n 1) (> n (length variants)))
           (user-error "Parlance: no variant %s" (or n "at point"))))
    (let ((text (plist-get (nth (1- n) variants) :text))
          (source (parlance--session-source s))
          (beg (parlance--session-beg s))
          (end (parlance--session-end s)))
      (unless (and (buffer-live-p source)
                   (equal (with-current-buffer source
                            (buffer-substring-no-properties beg end))
                          (parlance--session-original s)))
        (user-error "Parlance: the text changed since the rewrite started; not replacing it"))
      (with-current-buffer source
        (barf-if-buffer-read-only)
        ;; One undo step: boundaries around a single delete + insert.
        (undo-boundary)
        (save-excursion
          (goto-char beg)
          (delete-region beg end)
          (insert text))
        (undo-boundary)
        (deactivate-mark))
      (setq parlance--sessions (assq-delete-all 'variants parlance--sessions))
      (let ((buf (parlance--session-buffer s)))
        (when (buffer-live-p buf)
          (let ((win (get-buffer-window buf)))
            (if win (quit-window t win) (kill-buffer buf)))))
      (let ((win (get-buffer-window source)))
        (if win (select-window win) (switch-to-buffer source)))
      (goto-char beg)
      (message "Parlance: replaced with variant %d (undo restores the original)" n))))

(defun parlance-next-variant ()
  "Move to the next variant."
  (interactive)
  (let ((next (next-single-property-change (point) 'parlance-variant)))
    (when next (goto-char next))))

(defun parlance-previous-variant ()
  "Move to the previous variant."
  (interactive)
  (let ((prev (previous-single-property-change (point) 'parlance-variant)))
    (when prev
      (goto-char prev)
      (unless (get-text-property (point) 'parlance-variant)
        (let ((p (previous-single-property-change (point) 'parlance-variant)))
          (when p (goto-char p)))))))

;;;; Summarize

;;;###autoload
(defun parlance-summarize-buffer (&optional beg end)
  "Summarize the buffer, or the text between BEG and END (the active region)."
  (interactive (and (use-region-p) (list (region-beginning) (region-end))))
  (let ((text (buffer-substring-no-properties (or beg (point-min)) (or end (point-max)))))
    (when (string-blank-p text)
      (user-error "Parlance: nothing to summarize"))
    (let* ((s (parlance--new-session 'summary))
           (token (parlance--new-token (lambda (value) (parlance--summary-progress s value)))))
      (setf (parlance--session-token s) token
            (parlance--session-buffer s) (parlance--show 'summary "*parlance summary*"))
      (parlance--render s #'parlance--insert-summary)
      (setf (parlance--session-req s)
            (parlance--request "analysis/summarize" (list :text text :workDoneToken token)
                               (lambda (result) (parlance--summary-done s result nil))
                               (lambda (err) (parlance--summary-done s nil err))))
      s)))

(defun parlance--summary-progress (s value)
  "Show the partial summary in progress VALUE for session S."
  (unless (parlance--session-done s)
    (parlance--note-phase s value)
    (when (stringp (plist-get value :delta))
      (cl-incf (parlance--session-deltas s)))
    (when (consp (plist-get value :partial))
      (setf (parlance--session-partial s) (plist-get value :partial)))
    (parlance--render s #'parlance--insert-summary)))

(defun parlance--summary-done (s result err)
  "Session S ended with RESULT or ERR."
  (parlance--finish-session s result err)
  (parlance--render s #'parlance--insert-summary))

(defun parlance--insert-list (title items)
  "Insert TITLE and ITEMS (a vector or list of strings) as bullets."
  (when (and items (> (length items) 0))
    (insert (propertize title 'face 'bold) "\n")
    (mapc (lambda (item) (insert "  - " (format "%s" item) "\n")) items)
    (insert "\n")))

(defun parlance--insert-summary (s)
  "Insert session S's summary (final or partial)."
  (insert (parlance--head s "Summarizing" "Summary   q closes"))
  (let ((r (or (parlance--session-result s) (parlance--session-partial s))))
    (when (stringp (plist-get r :summary))
      (insert (plist-get r :summary) "\n\n"))
    (parlance--insert-list "Main topics" (plist-get r :mainTopics))
    (parlance--insert-list "Key takeaways" (plist-get r :keyTakeaways))
    (when (stringp (plist-get r :targetAudience))
      (insert (format "Audience: %s" (plist-get r :targetAudience))
              (if (stringp (plist-get r :engagementLevel))
                  (format " · engagement: %s" (plist-get r :engagementLevel)) "")
              "\n"))))

;;;; Ask

(defun parlance--buffer-uri ()
  "A document uri for the current buffer."
  (if buffer-file-name
      (concat "file://" (expand-file-name buffer-file-name))
    (format "emacs://buffer/%s" (url-hexify-string (buffer-name)))))

(declare-function url-hexify-string "url-util" (string &optional allowed-chars))

;;;###autoload
(defun parlance-ask (question)
  "Ask QUESTION about the current buffer; the answer streams into a buffer."
  (interactive (list (read-string "Ask about this buffer: ")))
  (when (string-blank-p question)
    (user-error "Parlance: no question"))
  (require 'url-util)
  (let* ((text (buffer-substring-no-properties (point-min) (point-max)))
         (uri (parlance--buffer-uri))
         (sent (gethash uri parlance--docs))
         (s (parlance--new-session 'answer :question question :answer "")))
    (when (string-blank-p text)
      (user-error "Parlance: nothing to ask about"))
    (setf (parlance--session-buffer s) (parlance--show 'answer "*parlance answer*"))
    (parlance--render s #'parlance--insert-answer)
    (let ((fail (lambda (err) (parlance--ask-done s nil err)))
          (ask (lambda ()
                 (if (parlance--session-cancelled s)
                     (parlance--ask-done s nil (list :code parlance--cancelled :message "cancelled"))
                   (let ((token (parlance--new-token
                                 (lambda (value) (parlance--ask-progress s value)))))
                     (setf (parlance--session-token s) token)
                     (setf (parlance--session-req s)
                           (parlance--request "ask/stream"
                                              (list :uri uri :question question :workDoneToken token)
                                              (lambda (result) (parlance--ask-done s result nil))
                                              (lambda (err) (parlance--ask-done s nil err)))))))))
      (if (equal sent text)
          (funcall ask)
        (setf (parlance--session-req s)
              (parlance--request (if sent "document/change" "document/open")
                                 (list :uri uri :text text :format "text")
                                 (lambda (_info) (puthash uri text parlance--docs) (funcall ask))
                                 fail))))
    s))

(defun parlance--ask-progress (s value)
  "Add the streamed answer in progress VALUE to session S."
  (unless (parlance--session-done s)
    (parlance--note-phase s value)
    (let ((delta (plist-get value :delta))
          (text (parlance--partial-field value :answer)))
      (when (stringp delta)
        (cl-incf (parlance--session-deltas s))
        (setf (parlance--session-answer s)
              (cond (text text)
                    ((consp (plist-get value :partial)) (parlance--session-answer s))
                    (t (concat (parlance--session-answer s) delta))))))
    (parlance--render s #'parlance--insert-answer)))

(defun parlance--ask-done (s result err)
  "Session S ended with RESULT or ERR."
  (unless (parlance--session-done s)
    (parlance--finish-session s result err)
    (when (stringp (plist-get result :answer))
      (setf (parlance--session-answer s) (plist-get result :answer)))
    (parlance--render s #'parlance--insert-answer)))

(defun parlance--insert-answer (s)
  "Insert session S's question and (streaming or final) answer."
  (insert (parlance--head s "Answering" "Answer   q closes"))
  (insert (propertize (concat "Q: " (parlance--session-question s)) 'face 'italic) "\n\n")
  (insert (or (parlance--session-answer s) "") "\n")
  (let* ((r (parlance--session-result s))
         (citations (plist-get r :citations))
         (confidence (plist-get r :confidence))
         (related (plist-get r :relatedTopics)))
    (when (and citations (> (length citations) 0))
      (insert "\n" (propertize "Citations" 'face 'bold) "\n")
      (mapc (lambda (c)
              (let ((start (plist-get c :start)))
                (insert (format "  [%s] %s\n"
                                (if (numberp start)
                                    (concat (parlance--clock start) "–"
                                            (parlance--clock (or (plist-get c :end) start)))
                                  (format "segment %s" (plist-get c :segmentId)))
                                (replace-regexp-in-string
                                 "\n" " " (format "%s" (or (plist-get c :text) "")))))))
            citations))
    (when confidence
      (insert (if (numberp confidence)
                  (format "\nConfidence %.2f" confidence)
                (format "\nConfidence: %s" confidence))))
    (when (and related (> (length related) 0))
      (insert (format "%sRelated: %s" (if confidence " · " "\n")
                      (mapconcat (lambda (x) (format "%s" x)) related ", "))))))

(defun parlance--clock (seconds)
  "SECONDS as MM:SS."
  (let ((s (truncate seconds)))
    (format "%02d:%02d" (/ s 60) (% s 60))))

(provide 'parlance)
;;; parlance.el ends here
