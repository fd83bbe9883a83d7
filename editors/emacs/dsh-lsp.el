;;; dsh-lsp.el --- Cite dsh chat sessions in Emacs prompt buffers via Eglot  -*- lexical-binding: t -*-

;; Version: 0.1
;; Package-Requires: ((emacs "29.1") (eglot "1.14"))
;; Keywords: tools, convenience

;;; Commentary:

;; Configuration for the dsh-lsp language server with Eglot (built into Emacs 29+).
;; dsh-lsp completes `@' into mentions `@[label](dsh-session:...)' of other dsh sessions,
;; flags broken or self mentions, and prepares a prompt: readable text plus the
;; "Referenced sessions" context message that a chat client sends with it.
;;
;;   (add-to-list 'load-path "/path/to/dsh-lsp/editors/emacs")
;;   (require 'dsh-lsp)
;;   (setq dsh-lsp-sessions-dir "~/.dsh/sessions")     ; optional
;;   (add-hook 'dsh-chat-mode-hook #'eglot-ensure)
;;
;; Files named *.dshchat open in `dsh-chat-mode'.  To use the server in other prompt
;; buffers, add their major mode: (dsh-lsp-register-mode 'markdown-mode).
;;
;; Commands: `dsh-lsp-prepare' (context message into register `dsh-lsp-register' and a
;; buffer *dsh-prepared*), `dsh-lsp-insert-mention' (pick a session), `dsh-lsp-set-target'
;; (the chat's own session: excluded from candidates, flagged as a self reference),
;; `dsh-lsp-update-settings' (send changed settings to a running server).

;;; Code:

(require 'eglot)
(require 'jsonrpc)
(require 'subr-x)

(defgroup dsh-lsp nil
  "Mentions of dsh chat sessions through the dsh-lsp language server."
  :group 'tools
  :prefix "dsh-lsp-")

(defcustom dsh-lsp-program "dsh-lsp"
  "The dsh-lsp executable."
  :type 'string)

(defcustom dsh-lsp-sessions-dir nil
  "Session store root (setting sessionsDir); nil: $DSH_HOME/sessions or ~/.dsh/sessions."
  :type '(choice (const nil) directory))

(defcustom dsh-lsp-target nil
  "Default target plist, e.g. (:cwd \"/home/me/proj\") or (:sessionId \"...\")."
  :type '(plist))

(defcustom dsh-lsp-max-references nil
  "Setting maxReferences (1..3); nil: server default."
  :type '(choice (const nil) integer))

(defcustom dsh-lsp-candidate-limit nil
  "Setting candidateLimit; nil: server default."
  :type '(choice (const nil) integer))

(defcustom dsh-lsp-max-reference-bytes nil
  "Setting maxReferenceBytes; nil: server default."
  :type '(choice (const nil) integer))

(defcustom dsh-lsp-register ?d
  "Register that `dsh-lsp-prepare' fills with the context message text."
  :type 'character)

(defun dsh-lsp-settings ()
  "The settings object (initializationOptions and settings.dsh) as a plist."
  (let (s)
    (when dsh-lsp-max-reference-bytes (setq s (plist-put s :maxReferenceBytes dsh-lsp-max-reference-bytes)))
    (when dsh-lsp-candidate-limit (setq s (plist-put s :candidateLimit dsh-lsp-candidate-limit)))
    (when dsh-lsp-max-references (setq s (plist-put s :maxReferences dsh-lsp-max-references)))
    (when dsh-lsp-target (setq s (plist-put s :target dsh-lsp-target)))
    (when dsh-lsp-sessions-dir
      (setq s (plist-put s :sessionsDir (directory-file-name (expand-file-name dsh-lsp-sessions-dir)))))
    (or s eglot--{})))

(defun dsh-lsp-contact (&optional _interactive)
  "Eglot contact for dsh-lsp: the program and the initializationOptions."
  (list dsh-lsp-program :initializationOptions (dsh-lsp-settings)))

;;;###autoload
(define-derived-mode dsh-chat-mode text-mode "DSH-Chat"
  "Major mode for dsh prompt files (*.dshchat).")

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.dshchat\\'" . dsh-chat-mode))

(defun dsh-lsp-register-mode (mode)
  "Use dsh-lsp in buffers of major MODE."
  (add-to-list 'eglot-server-programs `((,mode :language-id "dsh-chat") . dsh-lsp-contact)))

(dsh-lsp-register-mode 'dsh-chat-mode)

(defun dsh-lsp--server ()
  "The Eglot server of the current buffer (after flushing pending edits)."
  (let ((server (eglot--current-server-or-lose)))
    (eglot--signal-textDocument/didChange)
    server))

(defun dsh-lsp-context-text (result)
  "Text of the context message in a dsh/prepare RESULT (\"\" when nothing is cited)."
  (let ((msg (plist-get result :contextMessage)))
    (if (not (and msg (listp msg)))
        ""
      (mapconcat (lambda (block) (or (plist-get block :text) ""))
                 (append (plist-get msg :content) nil) "\n"))))

(defun dsh-lsp-prepare-request (&optional target)
  "Send dsh/prepare for the current buffer and return the result plist.
TARGET, a plist like (:sessionId ID), overrides the buffer's target."
  (let ((params (list :textDocument (eglot--TextDocumentIdentifier))))
    (when target (setq params (plist-put params :target target)))
    (jsonrpc-request (dsh-lsp--server) :dsh/prepare params)))

(defun dsh-lsp-prepare ()
  "Prepare the current buffer: context message into `dsh-lsp-register', both texts shown."
  (interactive)
  (let* ((result (dsh-lsp-prepare-request))
         (context (dsh-lsp-context-text result)))
    (set-register dsh-lsp-register context)
    (with-current-buffer (get-buffer-create "*dsh-prepared*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert "# Readable text\n\n" (or (plist-get result :content) "")
                "\n\n# Context message\n\n"
                (if (string-empty-p context) "(no referenced sessions)" context) "\n"))
      (special-mode))
    (unless noninteractive (display-buffer "*dsh-prepared*"))
    (message "dsh-lsp: %d referenced session(s); context in register %c"
             (length (plist-get result :references)) dsh-lsp-register)
    result))

(defun dsh-lsp-set-target (target)
  "Send dsh/setTarget for the current buffer.  TARGET: plist (:sessionId ID :cwd DIR)."
  (interactive (list (list :sessionId (read-string "Session id of this chat: "))))
  (jsonrpc-notify (dsh-lsp--server) :dsh/setTarget
                  (list :textDocument (eglot--TextDocumentIdentifier) :target target)))

(defun dsh-lsp-candidates (&optional query)
  "Return the dsh/candidates list (vector of plists) for QUERY."
  (let ((params (list :textDocument (eglot--TextDocumentIdentifier))))
    (when (and query (not (string-empty-p query))) (setq params (plist-put params :query query)))
    (jsonrpc-request (dsh-lsp--server) :dsh/candidates params)))

(defun dsh-lsp-insert-mention (&optional query)
  "Pick a dsh session (matching QUERY) and insert its mention at point."
  (interactive)
  (let* ((cands (append (dsh-lsp-candidates query) nil))
         (table (mapcar (lambda (c)
                          (cons (format "%s  (%s)" (plist-get c :label) (or (plist-get c :cwd) "no cwd")) c))
                        cands))
         (choice (completing-read "Cite dsh session: " table nil t)))
    (insert (plist-get (cdr (assoc choice table)) :mention))))

(defun dsh-lsp-update-settings ()
  "Send the current settings to the running server (workspace/didChangeConfiguration)."
  (interactive)
  (jsonrpc-notify (dsh-lsp--server) :workspace/didChangeConfiguration
                  (list :settings (list :dsh (dsh-lsp-settings)))))

(provide 'dsh-lsp)
;;; dsh-lsp.el ends here
