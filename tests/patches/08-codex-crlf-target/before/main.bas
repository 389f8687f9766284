Option Explicit
Sub Main()
    MsgBox "hi"
End Sub
